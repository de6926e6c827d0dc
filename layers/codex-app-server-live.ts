import { Command, CommandExecutor } from "@effect/platform"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Duration, Effect, Either, Fiber, Layer, Option, ParseResult, Queue, Ref, Schema, Stream } from "effect"
import {
  CodexAppServer,
  CodexHook,
  type CodexHooksListing,
  CodexListError,
  CodexSkill,
  type CodexSkillsListing
} from "../src/codex/codex-app-server.js"
import { CodexCommandFailed } from "../src/codex/codex-cli.js"
import { VERSION } from "../src/version.js"
import { makeCodexLauncher } from "./codex-launcher.js"

/**
 * One app-server round trip takes about 0.3 s (it starts, installs its system skills, loads the
 * configuration); the bound is for a machine under load.
 */
export const APP_SERVER_TIMEOUT = Duration.seconds(30)

/** Any line of the protocol: a response carries the request's `id` and a `result` or an `error`. */
const Message = Schema.Struct({
  id: Schema.optional(Schema.Unknown),
  result: Schema.optional(Schema.Unknown),
  error: Schema.optional(Schema.Unknown)
})
type Message = typeof Message.Type
const decodeLine = Schema.decodeUnknownOption(Schema.parseJson(Message))

const RpcError = Schema.Struct({ message: Schema.String })
const decodeRpcError = Schema.decodeUnknownOption(RpcError)

const ListErrors = Schema.optionalWith(Schema.Array(CodexListError), { default: () => [] })

/** `skills/list`: one entry per cwd asked; only the fields blctx judges. */
const SkillsAnswer = Schema.Struct({
  data: Schema.NonEmptyArray(Schema.Struct({ skills: Schema.Array(CodexSkill), errors: ListErrors }))
})

/** `hooks/list`: one entry per cwd asked; only the fields blctx judges. */
const HooksAnswer = Schema.Struct({
  data: Schema.NonEmptyArray(
    Schema.Struct({
      hooks: Schema.Array(CodexHook),
      warnings: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
      errors: ListErrors
    })
  )
})

const INITIALIZE_ID = 0
const REQUEST_ID = 1
const STDERR_KEPT = 4000

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI color sequences in Codex's log lines
const ANSI = /\u001b\[[0-9;]*m/g

/**
 * Why codex stopped, on one line: from its `Error:` line on (its causes), or else its last line;
 * without color codes, the backtrace, or the warnings it prints on every run.
 */
export const lastWords = (stderr: string) => {
  const [beforeBacktrace = ""] = stderr.replace(ANSI, "").split("Stack backtrace:")
  const lines = beforeBacktrace
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("WARNING:"))
  const error = lines.findIndex((l) => l.startsWith("Error:"))
  return (error >= 0 ? lines.slice(error) : lines.slice(-1)).join(" ").replace(/\s+/g, " ").slice(0, 600)
}

/**
 * Asks the codex on PATH what it discovers in a Codex home, through `codex app-server`
 * (newline-delimited `{id, method, params}` on stdin and stdout): `initialize`, the `initialized`
 * notification once it answered, then one request. Notifications, lines that are not JSON and
 * everything on stderr are ignored; only the fields of the port's schemas are decoded. The child
 * is killed (its whole process group) when the question is answered, fails or runs out of time.
 */
export const makeCodexAppServerLive = (options: { readonly timeout?: Duration.Duration } = {}) =>
  Layer.effect(
    CodexAppServer,
    Effect.gen(function* () {
      const executor = yield* CommandExecutor.CommandExecutor
      const launcher = yield* makeCodexLauncher
      const timeout = options.timeout ?? APP_SERVER_TIMEOUT
      const encoder = new TextEncoder()

      const ask = <A, I>(codexHome: string, method: string, params: unknown, answer: Schema.Schema<A, I>) => {
        const failed = (reason: string) =>
          new CodexCommandFailed({ command: `codex app-server (${method})`, codexHome, reason })
        return Effect.scoped(
          Effect.gen(function* () {
            const input = yield* Queue.unbounded<string>()
            const command = (yield* launcher.command(codexHome, ["app-server"])).pipe(
              Command.stdin(Stream.fromQueue(input).pipe(Stream.map((line) => encoder.encode(line))))
            )
            const child = yield* Effect.acquireRelease(
              Command.start(command).pipe(
                Effect.mapError((e) => failed(`could not start codex app-server: ${e.message}`))
              ),
              // The whole group (codex's launcher and the native server) goes, however the question ended.
              (started) => Effect.zipRight(Queue.shutdown(input), Effect.ignore(started.kill("SIGKILL")))
            )
            // stderr is drained (a full pipe would stall codex) and its tail kept to explain an early exit.
            const stderr = yield* Ref.make("")
            const stderrRead = yield* child.stderr.pipe(
              Stream.decodeText(),
              Stream.runForEach((text) => Ref.update(stderr, (kept) => (kept + text).slice(-STDERR_KEPT))),
              Effect.ignore,
              Effect.forkScoped
            )
            const send = (message: object) => Queue.offer(input, `${JSON.stringify(message)}\n`)
            const rpcError = (m: Message) =>
              failed(
                Option.match(decodeRpcError(m.error), {
                  onNone: () => `codex answered with an error: ${JSON.stringify(m.error)}`.slice(0, 600),
                  onSome: (e) => e.message.slice(0, 600)
                })
              )

            // The request goes out only once `initialize` was answered, as the protocol requires.
            const onMessage = (m: Message): Effect.Effect<Option.Option<Message>, CodexCommandFailed> => {
              if (m.id === INITIALIZE_ID) {
                if (m.error !== undefined) return Effect.fail(rpcError(m))
                return send({ method: "initialized" }).pipe(
                  Effect.zipRight(send({ id: REQUEST_ID, method, params })),
                  Effect.as(Option.none())
                )
              }
              return Effect.succeed(m.id === REQUEST_ID ? Option.some(m) : Option.none())
            }

            yield* send({
              id: INITIALIZE_ID,
              method: "initialize",
              params: { clientInfo: { name: "blctx", version: VERSION } }
            })
            const response = yield* child.stdout.pipe(
              Stream.decodeText(),
              Stream.splitLines,
              Stream.filterMap(decodeLine),
              Stream.mapError((e) => failed(`could not read its output: ${e.message}`)),
              Stream.mapEffect(onMessage),
              Stream.filterMap((m) => m),
              Stream.runHead,
              // Without an answer codex exited: what it said on stderr, read to the end, says why.
              Effect.tap((head) => (Option.isNone(head) ? Fiber.join(stderrRead) : Effect.void)),
              Effect.timeoutFail({
                duration: timeout,
                onTimeout: () => failed(`no answer to ${method} within ${Duration.format(timeout)}`)
              })
            )
            if (Option.isNone(response)) {
              const said = lastWords(yield* Ref.get(stderr))
              return yield* failed(`it exited before answering ${method}${said === "" ? "" : `: ${said}`}`)
            }
            if (response.value.error !== undefined) return yield* rpcError(response.value)
            const decoded = Schema.decodeUnknownEither(answer)(response.value.result)
            if (Either.isLeft(decoded)) {
              const why = ParseResult.TreeFormatter.formatErrorSync(decoded.left).replaceAll("\n", " ")
              return yield* failed(`unexpected answer: ${why}`.slice(0, 600))
            }
            return decoded.right
          })
        ).pipe(Effect.provideService(CommandExecutor.CommandExecutor, executor))
      }

      const listSkills = Effect.fn("CodexAppServer.listSkills")(function* (codexHome: string, cwd: string) {
        const answer = yield* ask(codexHome, "skills/list", { cwds: [cwd], forceReload: true }, SkillsAnswer)
        const [entry] = answer.data
        const listing: CodexSkillsListing = { skills: entry.skills, errors: entry.errors }
        return listing
      })

      const listHooks = Effect.fn("CodexAppServer.listHooks")(function* (codexHome: string, cwd: string) {
        const answer = yield* ask(codexHome, "hooks/list", { cwds: [cwd] }, HooksAnswer)
        const [entry] = answer.data
        const listing: CodexHooksListing = { hooks: entry.hooks, warnings: entry.warnings, errors: entry.errors }
        return listing
      })

      return CodexAppServer.of({ listSkills, listHooks })
    })
  )

/** The live app server with Node's process launcher; needs `Paths` (and PATH from the environment). */
export const CodexAppServerLive = makeCodexAppServerLive().pipe(
  Layer.provide(NodeCommandExecutor.layer),
  Layer.provide(NodeFileSystem.layer)
)
