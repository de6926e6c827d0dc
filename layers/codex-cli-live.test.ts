import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Option } from "effect"
import { CodexCli } from "../src/codex/codex-cli.js"
import { Paths } from "../src/paths/paths.js"
import { stdioEntry } from "../testing/fake-codex-cli.js"
import { CodexCliLive, codexErrorText } from "./codex-cli-live.js"
import { findOnPath } from "./codex-launcher.js"

/** The real Codex CLI (the @openai/codex dev dependency), offline, in a temporary home. */
const bin = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..", "node_modules", ".bin")

let home = ""
beforeEach(() => {
  home = Fs.realpathSync(Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-codex-")))
})
afterEach(() => Fs.rmSync(home, { recursive: true, force: true }))

const withCodex = <A, E>(
  use: (codex: CodexCli["Type"]) => Effect.Effect<A, E>,
  options: { readonly path?: string; readonly codexHome?: string } = {}
) =>
  Effect.flatMap(CodexCli, use).pipe(
    Effect.provide(CodexCliLive),
    Effect.provide(Paths.layerFrom({ home, CODEX_HOME: options.codexHome })),
    Effect.withConfigProvider(
      ConfigProvider.fromMap(new Map([["PATH", options.path ?? `${bin}:${process.env.PATH ?? ""}`]]))
    )
  )

const SERVER = { name: "blctx-test", command: "/usr/bin/env", args: ["node", "/x/mcp.mjs", "--flag", "a b"] }

describe("CodexCliLive (the real codex)", () => {
  it.effect("adds, reads back and removes one server, leaving the others", () => {
    const codexHome = NodePath.join(home, "codex")
    Fs.mkdirSync(codexHome)
    return withCodex((codex) =>
      Effect.gen(function* () {
        expect(Option.isNone(yield* codex.getMcpServer(codexHome, SERVER.name))).toBe(true)
        yield* codex.addMcpServer(codexHome, { name: "other", command: "/bin/true", args: [] })
        yield* codex.addMcpServer(codexHome, SERVER)
        expect(yield* codex.getMcpServer(codexHome, SERVER.name)).toEqual(Option.some(stdioEntry(SERVER)))
        yield* codex.removeMcpServer(codexHome, SERVER.name)
        expect(Option.isNone(yield* codex.getMcpServer(codexHome, SERVER.name))).toBe(true)
        expect(Option.isSome(yield* codex.getMcpServer(codexHome, "other"))).toBe(true)
        const found = yield* codex.locate
        expect(found.path).toBe(NodePath.join(bin, "codex"))
        expect(Option.getOrElse(found.version, () => "")).toMatch(/^codex-cli \d+\.\d+/)
      })
    )
  })

  it.effect("a config codex cannot read is a failure with codex's own words, not a missing entry", () => {
    const codexHome = NodePath.join(home, "codex")
    Fs.mkdirSync(codexHome)
    Fs.writeFileSync(NodePath.join(codexHome, "config.toml"), "garbage [[\n")
    return withCodex((codex) =>
      Effect.gen(function* () {
        const failed = yield* Effect.either(codex.getMcpServer(codexHome, SERVER.name))
        if (Either.isRight(failed) || failed.left._tag !== "CodexCommandFailed") throw new Error("expected a failure")
        expect(failed.left.command).toBe(`codex mcp get ${SERVER.name} --json`)
        expect(failed.left.reason).toMatch(/^Error: .*config\.toml:1:9: /)
        expect(failed.left.reason).not.toMatch(/WARNING|backtrace|\n/)
      })
    )
  })

  it.effect("a CODEX_HOME naming a missing folder is codex's refusal, said plainly", () => {
    const codexHome = NodePath.join(home, "missing")
    return withCodex((codex) =>
      Effect.gen(function* () {
        const failed = yield* Effect.either(codex.addMcpServer(codexHome, SERVER))
        if (Either.isRight(failed) || failed.left._tag !== "CodexCommandFailed") throw new Error("expected a failure")
        expect(failed.left.reason).toContain("does not exist")
        expect(Fs.existsSync(codexHome)).toBe(false)
      })
    )
  })

  it.effect("in Codex's default home ($HOME/.codex) codex creates the folder itself, as for a person", () => {
    const codexHome = NodePath.join(home, ".codex")
    return withCodex((codex) =>
      Effect.gen(function* () {
        yield* codex.addMcpServer(codexHome, SERVER)
        expect(Fs.readFileSync(NodePath.join(codexHome, "config.toml"), "utf8")).toContain(
          `[mcp_servers.${SERVER.name}]`
        )
      })
    )
  })

  it.effect("no codex on PATH is CodexNotFound naming the directories searched", () =>
    withCodex(
      (codex) =>
        Effect.gen(function* () {
          const result = yield* Effect.either(codex.locate)
          if (Either.isRight(result)) throw new Error("expected a failure")
          expect(result.left._tag).toBe("CodexNotFound")
          expect(result.left.searched).toEqual([home])
          expect(result.left.message).toBe(`the codex command was not found on PATH (${home})`)
        }),
      { path: `relative/bin::${home}` }
    )
  )
})

describe("codex-cli-live helpers", () => {
  it("findOnPath takes the first executable file in an absolute PATH directory", () => {
    const a = NodePath.join(home, "a")
    const b = NodePath.join(home, "b")
    Fs.mkdirSync(a)
    Fs.mkdirSync(b)
    Fs.writeFileSync(NodePath.join(a, "codex"), "not executable", { mode: 0o644 })
    Fs.writeFileSync(NodePath.join(b, "codex"), "#!/bin/sh\n", { mode: 0o755 })
    expect(findOnPath(`.:${a}:${b}`, "codex")).toEqual({
      found: Option.some(NodePath.join(b, "codex")),
      searched: [a, b]
    })
  })

  it("codexErrorText keeps codex's error and causes on one line", () => {
    const stderr = [
      'WARNING: proceeding, even though we could not create PATH aliases: Refusing to create helper binaries under temporary dir "/tmp"',
      "Error: failed to load bootstrap configuration",
      "",
      "Caused by:",
      "    0: /h/config.toml:1:9: key with no value, expected `=`",
      "       |",
      "     1 | garbage [[",
      "       |         ^",
      "",
      "Stack backtrace:",
      "   0: <unknown>"
    ].join("\n")
    expect(codexErrorText({ code: 1, stdout: "", stderr })).toBe(
      "Error: failed to load bootstrap configuration Caused by: 0: /h/config.toml:1:9: key with no value, expected `=`"
    )
    expect(codexErrorText({ code: 3, stdout: "", stderr: "WARNING: x\n" })).toBe("exit status 3")
  })
})
