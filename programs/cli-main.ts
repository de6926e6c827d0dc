import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { CliConfig, Command, ValidationError } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, ConfigError, Console, type Context, Effect, Exit, Layer, Logger, ParseResult, Schema } from "effect"
import { ClaudeCliLive } from "../layers/claude-cli-live.js"
import { CodexAppServerLive } from "../layers/codex-app-server-live.js"
import { CodexCliLive } from "../layers/codex-cli-live.js"
import { ConsolePrompterLive } from "../layers/console-prompter.js"
import { DaemonConnectorLive } from "../layers/daemon-connector-live.js"
import { GeminiCliLive } from "../layers/gemini-cli-live.js"
import { HttpDownloaderLive } from "../layers/http-downloader.js"
import { McpProbeLive } from "../layers/mcp-probe-live.js"
import { NodeFileDigestLive } from "../layers/model-file-digest.js"
import { NodeSafeFsLive } from "../layers/node-safe-fs.js"
import { NodeTranscriptFilesLive } from "../layers/node-transcript-files.js"
import { OnnxModelRuntimeLazy } from "../layers/onnx-model-runtime-lazy.js"
import { SqliteOpenerLive } from "../layers/sqlite-opener-live.js"
import { JsonRendererLive, PlainRendererLive, TtyRendererLive } from "../layers/terminal-renderer.js"
import { boundErrorText, withBoundedErrors } from "../src/cli/bounded-errors.js"
import { endQuietlyOnClosedStdout } from "../src/cli/closed-stdout.js"
import { ExitStatus } from "../src/cli/exit-status.js"
import { extractGlobalFlags } from "../src/cli/global-flags.js"
import {
  commandNames,
  docText,
  findHelpTopic,
  type HelpTopic,
  helpCliConfig,
  renderCommandHelp,
  renderRootHelp
} from "../src/cli/help.js"
import { decideOutputMode, OutputMode } from "../src/cli/output-mode.js"
import { rootCommand, subcommands } from "../src/cli/root.js"
import { CliUsageError } from "../src/cli/usage-error.js"
import { unknownCommand, usageMessage } from "../src/cli/usage-message.js"
import { ConfigFile } from "../src/config/config-file.js"
import { describeDecodeError } from "../src/domain/decode-issues.js"
import { ExitCode } from "../src/domain/report.js"
import { ansiStyle, plainStyle } from "../src/installer/render-text.js"
import { ManifestStore } from "../src/ownership/manifest-store.js"
import { Paths } from "../src/paths/paths.js"
import { ProgramPaths } from "../src/paths/program-paths.js"
import type { ServiceManager } from "../src/service/service-manager.js"
import { sanitizeForTerminal, stringifyForTerminal } from "../src/terminal/sanitize.js"
import { VERSION } from "../src/version.js"

/** What differs between the `blctx` programs: where the entry point is and who supervises blctxd. */
export interface CliEntry {
  /**
   * The entry point's `import.meta.url`: recorded as the installation's CLI. Every entry point
   * (dist/programs/cli.js, the bundled dist/bin/blctx.mjs, the test programs in dist/test-programs/)
   * sits two levels below the package root, from which the other programs are found.
   */
  readonly entryUrl: string
  /** The machine's service manager in the product (`layers/supervisor-selection.ts`); a fake in tests. */
  readonly serviceManager: Layer.Layer<ServiceManager>
  /** The daemon entry the supervisor runs; the product's `dist/programs/daemon.js` unless a test composes its own. */
  readonly daemon?: string
}

type Mode = Context.Tag.Service<OutputMode>

const ExitStatusLive = Layer.succeed(ExitStatus, {
  set: (code) =>
    Effect.sync(() => {
      process.exitCode = code
    })
})

/** Every service the commands use, for one output mode and one entry. */
const mainLayer = (entry: CliEntry, mode: Mode) => {
  const self = fileURLToPath(entry.entryUrl)
  const packageRoot = NodePath.resolve(NodePath.dirname(self), "..", "..")
  const ProgramPathsLive = Layer.succeed(ProgramPaths, {
    node: process.execPath,
    cli: self,
    daemon: entry.daemon ?? NodePath.join(packageRoot, "dist", "programs", "daemon.js"),
    mcp: NodePath.join(packageRoot, "dist", "bin", "blctx-mcp.mjs"),
    hook: NodePath.join(packageRoot, "dist", "bin", "blctx-hook.cjs"),
    skill: NodePath.join(packageRoot, "skills", "base-layer-context", "SKILL.md")
  })
  const RendererLive = mode.json ? JsonRendererLive : mode.color ? TtyRendererLive : PlainRendererLive
  return Layer.mergeAll(
    ManifestStore.Default,
    SqliteOpenerLive,
    ProgramPathsLive,
    RendererLive,
    ConsolePrompterLive,
    ExitStatusLive,
    NodeTranscriptFilesLive,
    ConfigFile.Default,
    HttpDownloaderLive,
    NodeFileDigestLive,
    OnnxModelRuntimeLazy,
    entry.serviceManager,
    DaemonConnectorLive,
    CodexCliLive,
    ClaudeCliLive,
    GeminiCliLive,
    CodexAppServerLive,
    McpProbeLive,
    Layer.succeed(OutputMode, mode)
  ).pipe(Layer.provideMerge(Paths.Default), Layer.provideMerge(NodeSafeFsLive), Layer.provideMerge(NodeContext.layer))
}

const usage = (mode: Mode, given: string) =>
  Effect.gen(function* () {
    // The message may quote what was given (an option's value): short and redacted, on both outputs.
    const message = boundErrorText(given)
    yield* Console.error(`blctx: ${sanitizeForTerminal(message)}`)
    if (mode.json) {
      const error = Schema.encodeSync(CliUsageError)(new CliUsageError({ message }))
      yield* Console.log(stringifyForTerminal({ error, exit_code: ExitCode.usage }, undefined))
    }
    yield* Effect.flatMap(ExitStatus, (s) => s.set(ExitCode.usage))
  })

const descriptors = subcommands.map((command) => command.descriptor)
const names = commandNames(descriptors)

/**
 * The command tree run with @effect/cli's own error printing silenced: what it prints about a
 * command line it cannot parse (bare, unprefixed, before blctx could word it) is reported once by
 * `usage` instead, from the ValidationError it fails with. The commands' own stderr is untouched:
 * their handlers run with the console as it was.
 */
const runQuietly = (args: ReadonlyArray<string>) =>
  Console.consoleWith((console) => {
    const tree = Command.transformHandler(rootCommand, (handler) => Console.withConsole(handler, console))
    const run = Command.run(tree, { name: "blctx", version: VERSION })
    return Console.withConsole(run(args), { ...console, error: () => Effect.void })
  })

/** What a failed parse says: one line naming the argument (`src/cli/usage-message.ts`). */
const parseFailure = (mode: Mode, rest: ReadonlyArray<string>, e: ValidationError.ValidationError) =>
  usage(mode, usageMessage(docText(e.error), { args: rest, names, descriptors }))

/**
 * Help is blctx's own (`src/cli/help.ts`): plain unless colors are on, exit 0. With `--json` it is
 * one JSON document too, `{"version", "help": TEXT}` with the plain text, so a script reading stdout as
 * JSON gets the same help a person reads instead of a parse error.
 */
const help = (mode: Mode, topic: HelpTopic) => {
  const style = mode.color ? ansiStyle : plainStyle
  const print = (text: string) =>
    Console.log(mode.json ? stringifyForTerminal({ version: VERSION, help: text }, undefined) : text)
  if (topic._tag === "Root") return print(renderRootHelp(rootCommand.descriptor, descriptors, VERSION, style))
  const descriptor = topic._tag === "Command" ? descriptors[names.indexOf(topic.name)] : undefined
  return descriptor === undefined
    ? usage(mode, unknownCommand(topic.name))
    : print(renderCommandHelp(descriptor, style))
}

/** `--version`: the bare version, or `{"version": ...}` with `--json`. */
const version = (mode: Mode) => Console.log(mode.json ? stringifyForTerminal({ version: VERSION }, undefined) : VERSION)

/**
 * Anything no command handled (a defect, an unexpected error) is reported, not dumped: one line on
 * stderr, one JSON document on stdout with `--json`, exit 1. A stack never lands on stdout.
 */
const unexpected = (mode: Mode, cause: Cause.Cause<unknown>) =>
  Effect.gen(function* () {
    const squashed = Cause.squash(cause)
    // A request the client's own check refused (a payload's `make`): its message holds the whole
    // value given, so it is described from its issues instead, and its stack says nothing more.
    if (ParseResult.isParseError(squashed)) {
      return yield* reportOneLine(
        mode,
        "InvalidRequest",
        `invalid request: ${describeDecodeError(squashed, "(request)")}`
      )
    }
    // The environment blctx finds its files from (HOME unset or relative): the person's to fix.
    if (ConfigError.isConfigError(squashed)) {
      return yield* reportOneLine(mode, "EnvironmentInvalid", environmentProblem(squashed))
    }
    const message = boundErrorText(squashed instanceof Error ? squashed.message : String(squashed))
    yield* Console.error(`blctx: unexpected failure: ${sanitizeForTerminal(message)}`)
    yield* Console.error(sanitizeForTerminal(Cause.pretty(cause)))
    if (mode.json) {
      const error = { _tag: "UnexpectedFailure", message }
      yield* Console.log(stringifyForTerminal({ error, exit_code: ExitCode.failed }, undefined))
    }
    process.exitCode = ExitCode.failed
  })

/** One line on stderr, and with `--json` one error document on stdout; exit 1. */
const reportOneLine = (mode: Mode, tag: string, message: string) =>
  Effect.gen(function* () {
    yield* Console.error(`blctx: ${sanitizeForTerminal(message)}`)
    if (mode.json) {
      yield* Console.log(stringifyForTerminal({ error: { _tag: tag, message }, exit_code: ExitCode.failed }, undefined))
    }
    process.exitCode = ExitCode.failed
  })

/** What is wrong with the environment, and what to do, in the person's words. */
const environmentProblem = (error: ConfigError.ConfigError): string => {
  const problem = ConfigError.isMissingData(error)
    ? `${error.path.join(".")} is not set`
    : ConfigError.isInvalidData(error)
      ? `${error.path.join(".")} is not usable: ${error.message}`
      : String(error)
  return `${boundErrorText(problem)}. blctx finds its files under your home directory: set HOME to it (an absolute path) and run the command again.`
}

/**
 * The `blctx` program: takes `--json` and `--no-color` out of argv, decides the output mode once,
 * answers help itself, runs the command tree with every layer composed, and exits as a shell
 * expects. `programs/cli.ts` runs it with the machine's service manager; tests with a fake.
 */
export const runCli = (entry: CliEntry): void => {
  // Everything blctx creates is private to this user, with no window where it is not.
  process.umask(0o077)
  // A reader that goes away (`blctx status | head -2`) ends the command quietly (exit 141).
  endQuietlyOnClosedStdout()

  const { flags, rest } = extractGlobalFlags(process.argv.slice(2))
  const mode = decideOutputMode({
    flags,
    stdoutTty: process.stdout.isTTY === true,
    stdinTty: process.stdin.isTTY === true,
    noColorEnv: process.env.NO_COLOR
  })

  /** The signal that interrupted the command, for its exit status (128 + signal number). */
  let interruptedBy: number | undefined
  process.once("SIGINT", () => {
    interruptedBy = 130
  })
  process.once("SIGTERM", () => {
    interruptedBy = 143
  })

  const topic = findHelpTopic(rest, names)
  const first = rest[0] ?? ""
  const program =
    topic !== undefined
      ? help(mode, topic).pipe(Effect.provide(ExitStatusLive))
      : rest.length === 1 && first === "--version"
        ? version(mode)
        : // The root takes no options of its own: anything but a command first is a usage error.
          !names.includes(first)
          ? usage(mode, unknownCommand(first)).pipe(Effect.provide(ExitStatusLive))
          : runQuietly([process.argv[0] ?? "node", process.argv[1] ?? "blctx", ...rest]).pipe(
              Effect.catchTag("CliUsageError", (e) => usage(mode, e.message)),
              Effect.catchIf(ValidationError.isValidationError, (e) => parseFailure(mode, rest, e)),
              Effect.provide(mainLayer(entry, mode)),
              // Log lines go to stderr: stdout carries the command's output (one JSON document with --json).
              Effect.provide(Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger))),
              // Whatever help the library still prints leaves its built-in options out.
              Effect.provide(CliConfig.layer(helpCliConfig))
            )

  NodeRuntime.runMain(
    program.pipe(
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : unexpected(mode, cause)
      ),
      // Whatever reaches stderr (ours, @effect/cli's validation messages) quotes little.
      withBoundedErrors
    ),
    {
      disableErrorReporting: true,
      // The pretty logger writes to stdout; the program's own logger (stderr) stays in place.
      disablePrettyLogger: true,
      // SIGINT/SIGTERM interrupt the command: exit as a shell expects (130/143), not 0.
      teardown: (exit, onExit) => {
        if (Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)) onExit(interruptedBy ?? 130)
        else onExit(typeof process.exitCode === "number" ? process.exitCode : Exit.isFailure(exit) ? 1 : 0)
      }
    }
  )
}
