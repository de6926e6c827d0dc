import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Option } from "effect"
import type { ClaudeCliShape, ClaudeMcpServer } from "../claude/claude-cli.js"
import { shareAnswers, shareMcpAnswers } from "./shared-answers.js"

describe("shareAnswers", () => {
  it.effect("asks once per home and name, also for askers that come while the first is still waiting", () =>
    Effect.gen(function* () {
      const asked: Array<string> = []
      const release = yield* Deferred.make<void>()
      const { read } = yield* shareAnswers((home: string, name: string) =>
        Effect.zipRight(
          Effect.sync(() => asked.push(`${home}/${name}`)),
          Effect.as(Deferred.await(release), `${home}/${name} answer`)
        )
      )
      const waiting = yield* Effect.fork(
        Effect.all([read("h", "n"), read("h", "n"), read("h", "other"), read("g", "n")], { concurrency: "unbounded" })
      )
      yield* Deferred.succeed(release, undefined)
      const answers = yield* waiting.await.pipe(Effect.flatten)
      expect(answers).toEqual(["h/n answer", "h/n answer", "h/other answer", "g/n answer"])
      expect(yield* read("h", "n")).toBe("h/n answer")
      expect(asked).toEqual(["h/n", "h/other", "g/n"])
    })
  )

  it.effect("a failure is shared too: the CLI is not asked again in the same command", () =>
    Effect.gen(function* () {
      let asked = 0
      const { read } = yield* shareAnswers(() => Effect.suspend(() => Effect.fail(`failure ${++asked}`)))
      expect(yield* Effect.flip(read("h", "n"))).toBe("failure 1")
      expect(yield* Effect.flip(read("h", "n"))).toBe("failure 1")
    })
  )

  it.effect("an add or remove through the CLI forgets that home's answers, so the next read asks again", () =>
    Effect.gen(function* () {
      const calls: Array<string> = []
      const entry = { name: "x" } as ClaudeMcpServer
      const cli: ClaudeCliShape = {
        locate: Effect.die("unused"),
        getMcpServer: (home) =>
          Effect.sync(() => {
            calls.push(`get ${home}`)
            return Option.some(entry)
          }),
        addMcpServer: (home) => Effect.sync(() => void calls.push(`add ${home}`)),
        removeMcpServer: (home) => Effect.sync(() => void calls.push(`remove ${home}`))
      }
      const shared = yield* shareMcpAnswers(cli)
      yield* shared.getMcpServer("a", "n")
      yield* shared.getMcpServer("b", "n")
      yield* shared.getMcpServer("a", "n")
      yield* shared.addMcpServer("a", { name: "n", command: "c", args: [] })
      yield* shared.getMcpServer("a", "n")
      yield* shared.getMcpServer("b", "n")
      yield* shared.removeMcpServer("a", "n")
      yield* shared.getMcpServer("a", "n")
      expect(calls).toEqual(["get a", "get b", "add a", "get a", "remove a", "get a"])
    })
  )
})
