import * as NodePath from "node:path"
import { Command, CommandExecutor } from "@effect/platform"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Config, Duration, Effect, Layer, Option } from "effect"
import { OWN_CALL_VARIABLE } from "../src/capture/hook-command.js"
import {
  GEMINI_BIN_VARIABLE,
  GeminiCli,
  GeminiCommandFailed,
  type GeminiExecutable,
  GeminiNotFound,
  type GeminiStdioServer,
  geminiCliHome,
  parseMcpList
} from "../src/gemini/gemini-cli.js"
import { shareMcpAnswers } from "../src/installer/shared-answers.js"
import { Paths } from "../src/paths/paths.js"
import { findOnPath, isExecutableFile } from "./agent-executable.js"
import { claudeErrorText } from "./claude-cli-live.js"
import { runCommand } from "./daemon-process-table.js"

/** `gemini mcp add/remove` take a few seconds (Node start-up and the settings load); the bound is for a loaded machine. */
const GEMINI_TIMEOUT = Duration.seconds(60)
/** `gemini mcp list` starts every server and waits for each (its own bound is per server). */
const LIST_TIMEOUT = Duration.seconds(90)
const VERSION_TIMEOUT = Duration.seconds(30)

const PASSED_VARIABLES = ["PATH", "USER", "LOGNAME", "SHELL", "TMPDIR", "LANG", "LC_ALL", "LC_CTYPE", "TZ"] as const

/**
 * What a configuration command does not need: the relaunch with a bigger heap, colour, a browser.
 * GEMINI_CLI_TRUST_WORKSPACE: Gemini starts no MCP server (user-scope ones included) in a folder
 * the person has not trusted; blctx's registration is at user scope, and folder trust is the
 * person's choice per project, so `mcp list` is asked as in a trusted folder to learn whether the
 * server itself connects. blctx never writes trust.
 */
const QUIET = {
  GEMINI_CLI_NO_RELAUNCH: "true",
  GEMINI_CLI_TRUST_WORKSPACE: "true",
  NO_COLOR: "1",
  NO_BROWSER: "true",
  [OWN_CALL_VARIABLE]: "1"
} as const

/**
 * Gemini CLI through @effect/platform's `Command`, from `/` (no project's `.gemini/settings.json`
 * applies), with a sanitized environment: HOME, the variables above, and GEMINI_CLI_HOME when the
 * Gemini folder each call names is not `~/.gemini`.
 */
export const makeGeminiCliLive = Layer.effect(
  GeminiCli,
  Effect.gen(function* () {
    const executor = yield* CommandExecutor.CommandExecutor
    const paths = yield* Paths
    const pathVariable = yield* Config.string("PATH").pipe(Config.withDefault(""))
    const override = yield* Config.option(Config.string(GEMINI_BIN_VARIABLE)).pipe(
      Config.map(Option.filter((v) => v !== ""))
    )
    const defaultHome = NodePath.join(paths.home, ".gemini")

    const find = Effect.suspend((): Effect.Effect<{ path: string; source: "variable" | "path" }, GeminiNotFound> => {
      if (Option.isSome(override)) {
        const path = override.value
        return NodePath.isAbsolute(path) && isExecutableFile(path)
          ? Effect.succeed({ path, source: "variable" })
          : Effect.fail(new GeminiNotFound({ searched: [], variable: override }))
      }
      const { found, searched } = findOnPath(pathVariable, "gemini")
      return Option.match(found, {
        onNone: () => Effect.fail(new GeminiNotFound({ searched, variable: Option.none() })),
        onSome: (path) => Effect.succeed({ path, source: "path" as const })
      })
    })

    const environment = (geminiHome: string): Record<string, string> => {
      const env: Record<string, string> = { HOME: paths.home, ...QUIET }
      for (const name of PASSED_VARIABLES) {
        const value = process.env[name]
        if (value !== undefined) env[name] = value
      }
      if (pathVariable !== "") env.PATH = pathVariable
      if (NodePath.resolve(geminiHome) !== defaultHome) env.GEMINI_CLI_HOME = geminiCliHome(geminiHome)
      return env
    }

    const run = (geminiHome: string, args: ReadonlyArray<string>, timeout: Duration.Duration = GEMINI_TIMEOUT) =>
      Effect.flatMap(find, ({ path }) =>
        runCommand(
          Command.make(path, ...args).pipe(
            Command.env(environment(geminiHome), { extendEnv: false }),
            Command.workingDirectory("/")
          ),
          timeout
        ).pipe(Effect.provideService(CommandExecutor.CommandExecutor, executor))
      )

    const failed = (geminiHome: string, args: ReadonlyArray<string>, reason: string) =>
      new GeminiCommandFailed({ command: ["gemini", ...args].join(" "), geminiHome, reason })

    const locate: Effect.Effect<GeminiExecutable, GeminiNotFound> = Effect.gen(function* () {
      const found = yield* find
      const answer = yield* run(paths.geminiHome, ["--version"], VERSION_TIMEOUT)
      const version = answer.code === 0 ? answer.stdout.trim() : ""
      return { ...found, version: version === "" ? Option.none() : Option.some(version) }
    })

    const getMcpServer = Effect.fn("GeminiCli.getMcpServer")(function* (geminiHome: string, name: string) {
      const args = ["mcp", "list"]
      const answer = yield* run(geminiHome, args, LIST_TIMEOUT)
      if (answer.code !== 0) return yield* failed(geminiHome, args, claudeErrorText(answer))
      // 0.61 prints the listing on stderr; stdout is read too, should a later one move it.
      return Option.fromNullable(parseMcpList(`${answer.stderr}\n${answer.stdout}`).find((s) => s.name === name))
    })

    const addMcpServer = Effect.fn("GeminiCli.addMcpServer")(function* (geminiHome: string, server: GeminiStdioServer) {
      // After `--`, a server argument that is also one of gemini's flags (-e, --timeout) stays the server's.
      const args = ["mcp", "add", "--scope", "user", server.name, server.command, "--", ...server.args]
      const answer = yield* run(geminiHome, args)
      if (answer.code !== 0) return yield* failed(geminiHome, args, claudeErrorText(answer))
    })

    const removeMcpServer = Effect.fn("GeminiCli.removeMcpServer")(function* (geminiHome: string, name: string) {
      const args = ["mcp", "remove", "--scope", "user", name]
      const answer = yield* run(geminiHome, args)
      if (answer.code !== 0) return yield* failed(geminiHome, args, claudeErrorText(answer))
    })

    return GeminiCli.of({ locate, getMcpServer, addMcpServer, removeMcpServer })
  })
)

/** Every call asks gemini itself. */
export const GeminiCliEveryCall = makeGeminiCliLive.pipe(
  Layer.provide(NodeCommandExecutor.layer),
  Layer.provide(NodeFileSystem.layer)
)

/** The live Gemini CLI for one command: one `mcp list` per home and name serves every step. Needs `Paths`. */
export const GeminiCliLive = Layer.effect(GeminiCli, Effect.flatMap(GeminiCli, shareMcpAnswers)).pipe(
  Layer.provide(GeminiCliEveryCall)
)
