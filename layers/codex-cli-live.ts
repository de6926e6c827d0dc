import { CommandExecutor } from "@effect/platform"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Duration, Effect, Either, Layer, Option, ParseResult, Schema } from "effect"
import {
  CodexCli,
  CodexCommandFailed,
  type CodexExecutable,
  type CodexNotFound,
  McpServerEntry,
  McpServerNames,
  type StdioServer
} from "../src/codex/codex-cli.js"
import { shareMcpAnswers } from "../src/installer/shared-answers.js"
import { Paths } from "../src/paths/paths.js"
import { makeCodexLauncher } from "./codex-launcher.js"
import { type CommandResult, runCommand } from "./daemon-process-table.js"

/** `codex mcp add/get/remove` answer in about 0.1 s; the bound is for a machine under load. */
const CODEX_TIMEOUT = Duration.seconds(30)
const VERSION_TIMEOUT = Duration.seconds(10)

/**
 * What codex said, on one line: its `Error:` and `Caused by:` lines, without the warnings it
 * prints on every run (e.g. about PATH aliases), the backtrace, or TOML code frames.
 */
export const codexErrorText = (result: CommandResult): string => {
  const lines: Array<string> = []
  for (const raw of result.stderr.split("\n")) {
    const line = raw.trim()
    if (line.startsWith("Stack backtrace:")) break
    // A code frame (`10 | garbage [[`, `|   ^`) repeats what the cause line above it says.
    if (/^(\d+\s*)?\|/.test(line)) continue
    if (line === "" || line.startsWith("WARNING:")) continue
    lines.push(line)
  }
  const text = lines.join(" ").replace(/\s+/g, " ").trim()
  return text === "" ? `exit status ${result.code}` : text.slice(0, 600)
}

const decodeJson = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(Schema.parseJson(schema))
  return (text: string) =>
    Either.mapLeft(decode(text), (e) => ParseResult.TreeFormatter.formatErrorSync(e).replaceAll("\n", " "))
}
const decodeEntry = decodeJson(McpServerEntry)
const decodeNames = decodeJson(McpServerNames)

/**
 * The Codex CLI found on PATH, run through @effect/platform's `Command` (bounded in time, output
 * collected), in the Codex home each call names (`codex-launcher.ts`).
 */
export const makeCodexCliLive = Layer.effect(
  CodexCli,
  Effect.gen(function* () {
    const executor = yield* CommandExecutor.CommandExecutor
    const paths = yield* Paths
    const launcher = yield* makeCodexLauncher

    const run = (codexHome: string, args: ReadonlyArray<string>, timeout: Duration.Duration = CODEX_TIMEOUT) =>
      Effect.flatMap(launcher.command(codexHome, args), (command) =>
        runCommand(command, timeout).pipe(Effect.provideService(CommandExecutor.CommandExecutor, executor))
      )

    const failed = (codexHome: string, args: ReadonlyArray<string>, reason: string) =>
      new CodexCommandFailed({ command: ["codex", ...args].join(" "), codexHome, reason })

    const locate: Effect.Effect<CodexExecutable, CodexNotFound> = Effect.gen(function* () {
      const path = yield* launcher.locate
      const answer = yield* run(paths.codexHome, ["--version"], VERSION_TIMEOUT)
      const version = answer.code === 0 ? answer.stdout.trim() : ""
      return { path, version: version === "" ? Option.none() : Option.some(version) }
    })

    const getMcpServer = Effect.fn("CodexCli.getMcpServer")(function* (codexHome: string, name: string) {
      const args = ["mcp", "get", name, "--json"]
      const answer = yield* run(codexHome, args)
      if (answer.code === 0) {
        const entry = decodeEntry(answer.stdout)
        if (Either.isLeft(entry)) return yield* failed(codexHome, args, `unexpected output: ${entry.left}`)
        return Option.some(entry.right)
      }
      // `get` exits 1 both for a missing name and for a broken config: the list tells them apart
      // without depending on the wording of its message.
      const listArgs = ["mcp", "list", "--json"]
      const list = yield* run(codexHome, listArgs)
      if (list.code !== 0) return yield* failed(codexHome, args, codexErrorText(answer))
      const names = decodeNames(list.stdout)
      if (Either.isLeft(names)) return yield* failed(codexHome, listArgs, `unexpected output: ${names.left}`)
      if (names.right.some((s) => s.name === name)) return yield* failed(codexHome, args, codexErrorText(answer))
      return Option.none()
    })

    const addMcpServer = Effect.fn("CodexCli.addMcpServer")(function* (codexHome: string, server: StdioServer) {
      const args = ["mcp", "add", server.name, "--", server.command, ...server.args]
      const answer = yield* run(codexHome, args)
      if (answer.code !== 0) return yield* failed(codexHome, args, codexErrorText(answer))
    })

    const removeMcpServer = Effect.fn("CodexCli.removeMcpServer")(function* (codexHome: string, name: string) {
      const args = ["mcp", "remove", name]
      const answer = yield* run(codexHome, args)
      if (answer.code !== 0) return yield* failed(codexHome, args, codexErrorText(answer))
    })

    return CodexCli.of({ locate, getMcpServer, addMcpServer, removeMcpServer })
  })
)

/** The live Codex CLI with Node's process launcher; needs `Paths`. */
export const CodexCliLive = Layer.effect(CodexCli, Effect.flatMap(CodexCli, shareMcpAnswers)).pipe(
  // One `mcp get` per home and name for the whole command: steps share its answer (src/installer/shared-answers.ts).
  Layer.provide(makeCodexCliLive),
  Layer.provide(NodeCommandExecutor.layer),
  Layer.provide(NodeFileSystem.layer)
)
