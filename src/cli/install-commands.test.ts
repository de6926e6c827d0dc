import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { answeredHooks } from "../installer/steps/hooks-manifest.js"
import { MANIFEST_VERSION, Manifest } from "../ownership/manifest.js"
import { decideHooks } from "./install-commands.js"
import { OutputMode } from "./output-mode.js"
import { Prompter } from "./prompter.js"

const NONE = { hooks: false, noHooks: false }

/** A terminal session whose prompter answers `answer` and counts the questions. */
const atTerminal = (answer: boolean, asked: Array<string>) =>
  Layer.mergeAll(
    Layer.succeed(OutputMode, { json: false, color: true, interactive: true }),
    Layer.succeed(Prompter, {
      confirm: (q) =>
        Effect.sync(() => {
          asked.push(q)
          return answer
        })
    })
  )

const manifest = (over: Partial<ConstructorParameters<typeof Manifest>[0]> = {}) =>
  new Manifest({
    version: MANIFEST_VERSION,
    installation_id: "6f1c2a3b-4d5e-4f60-8a1b-2c3d4e5f6a7b" as Manifest["installation_id"],
    state: "active",
    owned_files: [],
    created_directories: [],
    node: "/usr/bin/node" as Manifest["node"],
    cli: "/opt/blctx/cli.js" as Manifest["cli"],
    created_at: "2026-12-03T00:00:00.000Z",
    updated_at: "2026-12-03T00:00:00.000Z",
    choices: {},
    ...over
  })

describe("install's hooks question", () => {
  const asked: Array<string> = []
  it.effect("is asked at a terminal once; an answer an earlier install recorded stands without asking again", () =>
    Effect.gen(function* () {
      expect(yield* decideHooks(NONE, "codex", Option.none())).toBe("decline")
      expect(asked).toHaveLength(1)
      expect(yield* decideHooks(NONE, "codex", Option.some("declined"))).toBe("default")
      expect(yield* decideHooks(NONE, "claude", Option.some("installed"))).toBe("default")
      expect(asked).toHaveLength(1)
      // A flag is a new answer, asked for: it wins over the recorded one.
      expect(yield* decideHooks({ hooks: true, noHooks: false }, "codex", Option.some("declined"))).toBe("install")
      expect(yield* decideHooks({ hooks: false, noHooks: true }, "codex", Option.some("installed"))).toBe("decline")
    }).pipe(Effect.provide(atTerminal(false, asked)))
  )

  it("the recorded answer is each agent's own choice, or hooks blctx registered before choices were kept", () => {
    expect(answeredHooks(Option.none(), "codex")).toEqual(Option.none())
    expect(answeredHooks(Option.some(manifest()), "codex")).toEqual(Option.none())
    const declined = Option.some(manifest({ choices: { claude_hooks: "declined" } }))
    expect(answeredHooks(declined, "claude")).toEqual(Option.some("declined"))
    expect(answeredHooks(declined, "codex")).toEqual(Option.none())
    const older = Option.some(
      manifest({
        codex_hooks: [
          {
            codex_home: "/h/.codex",
            hooks_file: "/h/.codex/hooks.json",
            generation: "0b7e6c1a-2f3d-4e5f-8a9b-1c2d3e4f5a6b",
            entries: []
          }
        ] as unknown as Manifest["codex_hooks"]
      })
    )
    expect(answeredHooks(older, "codex")).toEqual(Option.some("installed"))
  })
})
