import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Either, Layer } from "effect"
import { CodexAppServer } from "../src/codex/codex-app-server.js"
import type { CodexError } from "../src/codex/codex-cli.js"
import { Paths } from "../src/paths/paths.js"
import { CodexAppServerLive, lastWords, makeCodexAppServerLive } from "./codex-app-server-live.js"

/** The real Codex CLI (the @openai/codex dev dependency), offline, in a temporary home. */
const bin = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..", "node_modules", ".bin")

let home = ""
let codexHome = ""
beforeEach(() => {
  home = Fs.realpathSync(Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-app-server-")))
  codexHome = NodePath.join(home, "codex")
  Fs.mkdirSync(codexHome)
})
afterEach(() => Fs.rmSync(home, { recursive: true, force: true }))

const withAppServer = <A, E>(
  use: (server: CodexAppServer["Type"]) => Effect.Effect<A, E>,
  options: { readonly path?: string; readonly timeout?: Duration.Duration } = {}
) =>
  Effect.flatMap(CodexAppServer, use).pipe(
    Effect.provide(
      options.timeout === undefined
        ? CodexAppServerLive
        : makeCodexAppServerLive({ timeout: options.timeout }).pipe(
            Layer.provide(NodeCommandExecutor.layer),
            Layer.provide(NodeFileSystem.layer)
          )
    ),
    Effect.provide(Paths.layerFrom({ home })),
    Effect.withConfigProvider(
      ConfigProvider.fromMap(new Map([["PATH", options.path ?? `${bin}:${process.env.PATH ?? ""}`]]))
    )
  )

const failureOf = <A>(result: Either.Either<A, CodexError>) => {
  if (Either.isRight(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.right)}`)
  return result.left
}

/** A stand-in `codex` (a Node script) in its own PATH directory, for what the real one cannot be made to do. */
const fakeCodex = (body: string) => {
  const dir = NodePath.join(home, "fake-bin")
  Fs.mkdirSync(dir, { recursive: true })
  Fs.writeFileSync(NodePath.join(dir, "codex"), `#!${process.execPath}\n${body}\n`, { mode: 0o755 })
  return dir
}

/** A script that answers `initialize` (after some noise), then answers the request with `reply`. */
const scripted = (reply: string) =>
  fakeCodex(`
const rl = require("node:readline").createInterface({ input: process.stdin })
process.stderr.write("WARNING: noise\\n")
rl.on("line", (line) => {
  const m = JSON.parse(line)
  if (m.id === 0) {
    process.stdout.write("not json at all\\n")
    process.stdout.write(JSON.stringify({ method: "configWarning", params: { summary: "x" } }) + "\\n")
    process.stdout.write(JSON.stringify({ id: 0, result: {} }) + "\\n")
  } else if (m.id === 1) {
    process.stdout.write(${reply} + "\\n")
  }
})`)

describe("CodexAppServerLive (the real codex)", () => {
  it.effect("lists a skill under $CODEX_HOME/skills, enabled, at its path", () => {
    const skill = NodePath.join(codexHome, "skills", "demo-skill", "SKILL.md")
    Fs.mkdirSync(NodePath.dirname(skill), { recursive: true })
    Fs.writeFileSync(skill, "---\nname: demo-skill\ndescription: A skill for the test.\n---\n\nBody.\n")
    return withAppServer((server) =>
      Effect.gen(function* () {
        const listing = yield* server.listSkills(codexHome, home)
        expect(listing.skills.find((s) => s.name === "demo-skill")).toEqual({
          name: "demo-skill",
          description: "A skill for the test.",
          path: skill,
          scope: "user",
          enabled: true
        })
        expect(listing.errors).toEqual([])
      })
    )
  })

  it.effect("reports a skill file Codex cannot load among the errors", () => {
    const skill = NodePath.join(codexHome, "skills", "broken", "SKILL.md")
    Fs.mkdirSync(NodePath.dirname(skill), { recursive: true })
    Fs.writeFileSync(skill, "no front matter\n")
    return withAppServer((server) =>
      Effect.gen(function* () {
        const listing = yield* server.listSkills(codexHome, home)
        expect(listing.skills.some((s) => s.path === skill)).toBe(false)
        expect(listing.errors.map((e) => e.path)).toEqual([skill])
      })
    )
  })

  it.effect("lists a hook from $CODEX_HOME/hooks.json, untrusted, with its hash", () => {
    Fs.writeFileSync(
      NodePath.join(codexHome, "hooks.json"),
      JSON.stringify({
        hooks: { SessionStart: [{ hooks: [{ type: "command", command: "/bin/true a", timeout: 5 }] }] }
      })
    )
    return withAppServer((server) =>
      Effect.gen(function* () {
        const listing = yield* server.listHooks(codexHome, home)
        expect(listing.hooks).toHaveLength(1)
        const [hook] = listing.hooks
        expect(hook).toMatchObject({
          eventName: "sessionStart",
          command: "/bin/true a",
          timeoutSec: 5,
          enabled: true,
          trustStatus: "untrusted",
          sourcePath: NodePath.join(codexHome, "hooks.json")
        })
        expect(hook?.currentHash).toMatch(/^sha256:[0-9a-f]{64}$/)
        expect(listing.warnings).toEqual([])
        expect(listing.errors).toEqual([])
      })
    )
  })

  it.effect("a CODEX_HOME naming a missing folder is codex's own refusal, said plainly", () =>
    withAppServer((server) =>
      Effect.gen(function* () {
        const missing = NodePath.join(home, "missing")
        const failed = failureOf(yield* Effect.either(server.listSkills(missing, home)))
        expect(failed._tag).toBe("CodexCommandFailed")
        expect(failed.message).toMatch(
          /^codex app-server \(skills\/list\) failed \(CODEX_HOME .*\/missing\): it exited before answering skills\/list: Error: CODEX_HOME points to ".*\/missing", but that path does not exist$/
        )
      })
    )
  )

  it.effect("no codex on PATH is CodexNotFound", () =>
    withAppServer(
      (server) =>
        Effect.gen(function* () {
          const failed = failureOf(yield* Effect.either(server.listHooks(codexHome, home)))
          expect(failed._tag).toBe("CodexNotFound")
          expect(failed.message).toBe("the codex command was not found: PATH is empty")
        }),
      { path: "" }
    )
  )
})

describe("CodexAppServerLive (protocol edges, with a stand-in codex)", () => {
  it.effect("skips noise and notifications; a JSON-RPC error answer is CodexCommandFailed with Codex's message", () =>
    withAppServer(
      (server) =>
        Effect.gen(function* () {
          const failed = failureOf(yield* Effect.either(server.listSkills(codexHome, home)))
          expect(failed._tag).toBe("CodexCommandFailed")
          expect(failed.message).toBe(
            `codex app-server (skills/list) failed (CODEX_HOME ${codexHome}): Invalid request: missing field \`cwds\``
          )
        }),
      {
        path: scripted(
          `JSON.stringify({ id: 1, error: { code: -32600, message: "Invalid request: missing field \`cwds\`" } })`
        )
      }
    )
  )

  it.effect("an answer without the documented fields is refused, not guessed at", () =>
    withAppServer(
      (server) =>
        Effect.gen(function* () {
          const failed = failureOf(yield* Effect.either(server.listHooks(codexHome, home)))
          expect(failed.message).toMatch(/: unexpected answer: .*data/)
        }),
      { path: scripted(`JSON.stringify({ id: 1, result: { data: [] } })`) }
    )
  )

  // Live clock: the bound is real time, which the test clock of it.effect would never reach.
  it.live(
    "no answer within the bound ends in CodexCommandFailed naming the method and the bound; the child is killed",
    () => {
      const pidFile = NodePath.join(home, "pid")
      const path = fakeCodex(`require("node:fs").writeFileSync(${JSON.stringify(pidFile)}, String(process.pid))
setInterval(() => {}, 1000)`)
      return withAppServer(
        (server) =>
          Effect.gen(function* () {
            const failed = failureOf(yield* Effect.either(server.listHooks(codexHome, home)))
            expect(failed._tag).toBe("CodexCommandFailed")
            expect(failed.message).toBe(
              `codex app-server (hooks/list) failed (CODEX_HOME ${codexHome}): no answer to hooks/list within 1s`
            )
            // The scope ended after the child's exit was seen, so the process is gone.
            const pid = Number(Fs.readFileSync(pidFile, "utf8"))
            expect(() => process.kill(pid, 0)).toThrow(/ESRCH/)
          }),
        { path, timeout: Duration.seconds(1) }
      )
    }
  )

  it("lastWords keeps codex's error from its Error: line, without colors, warnings or backtrace", () => {
    const stderr = [
      "WARNING: proceeding, even though we could not create PATH aliases",
      "\u001b[2m2026-01-01T00:00:00Z\u001b[0m \u001b[31mERROR\u001b[0m codex_app_server: could not find bubblewrap",
      "Error: failed to load configuration",
      "",
      "Caused by:",
      "    0: bad key",
      "",
      "Stack backtrace:",
      "   0: <unknown>"
    ].join("\n")
    expect(lastWords(stderr)).toBe("Error: failed to load configuration Caused by: 0: bad key")
    expect(lastWords("\u001b[31mERROR\u001b[0m something broke\n")).toBe("ERROR something broke")
    expect(lastWords("WARNING: only this\n")).toBe("")
  })
})
