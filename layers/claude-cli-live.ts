import * as NodePath from "node:path"
import { Command, CommandExecutor } from "@effect/platform"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Config, Duration, Effect, Layer, Option } from "effect"
import { OWN_CALL_VARIABLE } from "../src/capture/hook-command.js"
import {
  CLAUDE_BIN_VARIABLE,
  ClaudeCli,
  ClaudeCommandFailed,
  type ClaudeExecutable,
  ClaudeNotFound,
  type ClaudeStdioServer,
  parseMcpGet
} from "../src/claude/claude-cli.js"
import { shareMcpAnswers } from "../src/installer/shared-answers.js"
import { Paths } from "../src/paths/paths.js"
import { findOnPath, isExecutableFile } from "./agent-executable.js"
import { type CommandResult, runCommand } from "./daemon-process-table.js"

/** `claude mcp add/remove` answer in under a second; the bound is for a machine under load. */
const CLAUDE_TIMEOUT = Duration.seconds(30)
/** `claude mcp get` starts the server and waits for it (Claude's own bound is 30 s); a little more. */
const HEALTH_TIMEOUT = Duration.seconds(45)
const VERSION_TIMEOUT = Duration.seconds(15)

/**
 * The variables passed to claude: enough to find its configuration, run node and pick a locale.
 * Nothing else of blctx's environment (API keys, the agent's own variables, a BLCTX_* override)
 * reaches Claude or the MCP server it starts to check it.
 */
const PASSED_VARIABLES = ["PATH", "USER", "LOGNAME", "SHELL", "TMPDIR", "LANG", "LC_ALL", "LC_CTYPE", "TZ"] as const

/**
 * Turn off what a configuration command does not need: update checks, telemetry, colour. And
 * blctx's own hooks: Claude Code runs SessionStart and SessionEnd even for `claude mcp get`, and
 * the handler captures nothing when it sees OWN_CALL_VARIABLE (src/capture/hook-command.ts).
 */
const QUIET = {
  DISABLE_AUTOUPDATER: "1",
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  NO_COLOR: "1",
  [OWN_CALL_VARIABLE]: "1"
} as const

/** What claude said on one line: its stderr (else stdout), without blank lines, bounded. */
export const claudeErrorText = (result: CommandResult): string => {
  const said = (result.stderr.trim() === "" ? result.stdout : result.stderr)
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "")
    .join(" ")
    .replace(/\s+/g, " ")
  return said === "" ? `exit status ${result.code}` : said.slice(0, 600)
}

/**
 * Claude Code's CLI, run through @effect/platform's `Command` (bounded in time, output collected)
 * from `/` (so no project's `.mcp.json` applies), with a sanitized environment: HOME, the
 * variables above, and CLAUDE_CONFIG_DIR set to the configuration each call names, except
 * Claude's own default (`~/.claude`), where it is left out, as for a person who never set it.
 */
export const makeClaudeCliLive = Layer.effect(
  ClaudeCli,
  Effect.gen(function* () {
    const executor = yield* CommandExecutor.CommandExecutor
    const paths = yield* Paths
    const pathVariable = yield* Config.string("PATH").pipe(Config.withDefault(""))
    const override = yield* Config.option(Config.string(CLAUDE_BIN_VARIABLE)).pipe(
      Config.map(Option.filter((v) => v !== ""))
    )
    const defaultHome = NodePath.join(paths.home, ".claude")

    const find = Effect.suspend((): Effect.Effect<{ path: string; source: "variable" | "path" }, ClaudeNotFound> => {
      if (Option.isSome(override)) {
        const path = override.value
        return NodePath.isAbsolute(path) && isExecutableFile(path)
          ? Effect.succeed({ path, source: "variable" })
          : Effect.fail(new ClaudeNotFound({ searched: [], variable: override }))
      }
      const { found, searched } = findOnPath(pathVariable, "claude")
      return Option.match(found, {
        onNone: () => Effect.fail(new ClaudeNotFound({ searched, variable: Option.none() })),
        onSome: (path) => Effect.succeed({ path, source: "path" as const })
      })
    })

    const environment = (claudeHome: string): Record<string, string> => {
      const env: Record<string, string> = { HOME: paths.home, ...QUIET }
      for (const name of PASSED_VARIABLES) {
        const value = process.env[name]
        if (value !== undefined) env[name] = value
      }
      // The PATH claude was looked up in (claude's launcher and the servers it checks need node).
      if (pathVariable !== "") env.PATH = pathVariable
      if (NodePath.resolve(claudeHome) !== defaultHome) env.CLAUDE_CONFIG_DIR = claudeHome
      return env
    }

    const run = (claudeHome: string, args: ReadonlyArray<string>, timeout: Duration.Duration = CLAUDE_TIMEOUT) =>
      Effect.flatMap(find, ({ path }) =>
        runCommand(
          Command.make(path, ...args).pipe(
            Command.env(environment(claudeHome), { extendEnv: false }),
            Command.workingDirectory("/")
          ),
          timeout
        ).pipe(Effect.provideService(CommandExecutor.CommandExecutor, executor))
      )

    const failed = (claudeHome: string, args: ReadonlyArray<string>, reason: string) =>
      new ClaudeCommandFailed({ command: ["claude", ...args].join(" "), claudeHome, reason })

    const locate: Effect.Effect<ClaudeExecutable, ClaudeNotFound> = Effect.gen(function* () {
      const found = yield* find
      const answer = yield* run(paths.claudeHome, ["--version"], VERSION_TIMEOUT)
      const version = answer.code === 0 ? answer.stdout.trim() : ""
      return { ...found, version: version === "" ? Option.none() : Option.some(version) }
    })

    const getMcpServer = Effect.fn("ClaudeCli.getMcpServer")(function* (claudeHome: string, name: string) {
      const args = ["mcp", "get", name]
      const answer = yield* run(claudeHome, args, HEALTH_TIMEOUT)
      if (answer.code === 0) {
        const entry = parseMcpGet(answer.stdout)
        if (Option.isNone(entry)) {
          return yield* failed(claudeHome, args, `unexpected output: ${answer.stdout.trim().slice(0, 300)}`)
        }
        return entry
      }
      // Claude 2.1 says `No MCP server named "NAME"` (exit 1) for a missing name.
      if (/no mcp server named/i.test(`${answer.stderr}\n${answer.stdout}`)) return Option.none()
      return yield* failed(claudeHome, args, claudeErrorText(answer))
    })

    const addMcpServer = Effect.fn("ClaudeCli.addMcpServer")(function* (claudeHome: string, server: ClaudeStdioServer) {
      const args = ["mcp", "add", "--scope", "user", server.name, "--", server.command, ...server.args]
      const answer = yield* run(claudeHome, args)
      if (answer.code !== 0) return yield* failed(claudeHome, args, claudeErrorText(answer))
    })

    const removeMcpServer = Effect.fn("ClaudeCli.removeMcpServer")(function* (claudeHome: string, name: string) {
      const args = ["mcp", "remove", "--scope", "user", name]
      const answer = yield* run(claudeHome, args)
      if (answer.code !== 0) return yield* failed(claudeHome, args, claudeErrorText(answer))
    })

    return ClaudeCli.of({ locate, getMcpServer, addMcpServer, removeMcpServer })
  })
)

/** Every call asks claude itself: for a layer that outlives one command (tests that change Claude's config between calls). */
export const ClaudeCliEveryCall = makeClaudeCliLive.pipe(
  Layer.provide(NodeCommandExecutor.layer),
  Layer.provide(NodeFileSystem.layer)
)

/**
 * The live Claude Code CLI with Node's process launcher, for one command: one `mcp get` per home
 * and name serves every step (src/installer/shared-answers.ts). Needs `Paths`.
 */
export const ClaudeCliLive = Layer.effect(ClaudeCli, Effect.flatMap(ClaudeCli, shareMcpAnswers)).pipe(
  Layer.provide(ClaudeCliEveryCall)
)
