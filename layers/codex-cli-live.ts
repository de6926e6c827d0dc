import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { Command, CommandExecutor } from "@effect/platform"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Config, Duration, Effect, Either, Layer, Option, ParseResult, Schema } from "effect"
import {
  CodexCli,
  CodexCommandFailed,
  type CodexExecutable,
  CodexNotFound,
  McpServerEntry,
  McpServerNames,
  type StdioServer
} from "../src/codex/codex-cli.js"
import { Paths } from "../src/paths/paths.js"
import { type CommandResult, runCommand } from "./daemon-process-table.js"

/** `codex mcp add/get/remove` answer in about 0.1 s; the bound is for a machine under load. */
const CODEX_TIMEOUT = Duration.seconds(30)
const VERSION_TIMEOUT = Duration.seconds(10)

const isExecutableFile = (path: string) => {
  try {
    if (!Fs.statSync(path).isFile()) return false
    Fs.accessSync(path, Fs.constants.X_OK)
    return true
  } catch {
    return false
  }
}

/**
 * The first executable `name` in the absolute directories of PATH. Empty and relative entries
 * (which mean "the current directory") are skipped: an installer never runs a program that
 * depends on where it was started.
 */
export const findOnPath = (pathVariable: string, name = "codex") => {
  const searched = pathVariable.split(NodePath.delimiter).filter((d) => d !== "" && NodePath.isAbsolute(d))
  const found = searched.map((d) => NodePath.join(d, name)).find(isExecutableFile)
  return { found: Option.fromNullable(found), searched }
}

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
 * collected). Each call sets CODEX_HOME to the home it names, except Codex's own default
 * (`$HOME/.codex`), where CODEX_HOME is left out so Codex creates that folder itself when it is
 * missing, as it does for a person; a CODEX_HOME naming a missing folder is refused by Codex.
 */
export const makeCodexCliLive = Layer.effect(
  CodexCli,
  Effect.gen(function* () {
    const executor = yield* CommandExecutor.CommandExecutor
    const paths = yield* Paths
    const pathVariable = yield* Config.string("PATH").pipe(Config.withDefault(""))
    const defaultHome = NodePath.join(paths.home, ".codex")

    const locatePath = Effect.suspend(() => {
      const { found, searched } = findOnPath(pathVariable)
      return Option.match(found, {
        onNone: () => Effect.fail(new CodexNotFound({ searched })),
        onSome: Effect.succeed
      })
    })

    const environment = (codexHome: string) => {
      if (NodePath.resolve(codexHome) !== defaultHome) return { env: { CODEX_HOME: codexHome }, extendEnv: true }
      // Codex finds its default home through HOME: the same HOME blctx resolved it from.
      const { CODEX_HOME: _unset, ...rest } = process.env
      return { env: { ...rest, HOME: paths.home }, extendEnv: false }
    }

    const run = (codexHome: string, args: ReadonlyArray<string>, timeout: Duration.Duration = CODEX_TIMEOUT) =>
      Effect.flatMap(locatePath, (executable) => {
        const { env, extendEnv } = environment(codexHome)
        const command = Command.make(executable, ...args).pipe(
          Command.env(env, { extendEnv }),
          // Codex layers a project's .codex/config.toml over the global one from the working
          // directory; blctx reads and writes the global registration only.
          Command.workingDirectory("/")
        )
        return runCommand(command, timeout).pipe(Effect.provideService(CommandExecutor.CommandExecutor, executor))
      })

    const failed = (codexHome: string, args: ReadonlyArray<string>, reason: string) =>
      new CodexCommandFailed({ command: ["codex", ...args].join(" "), codexHome, reason })

    const locate: Effect.Effect<CodexExecutable, CodexNotFound> = Effect.gen(function* () {
      const path = yield* locatePath
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
export const CodexCliLive = makeCodexCliLive.pipe(
  Layer.provide(NodeCommandExecutor.layer),
  Layer.provide(NodeFileSystem.layer)
)
