import * as Net from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Layer } from "effect"
import fc from "fast-check"
import { NodeSocketBinderLive } from "../../layers/node-socket-binder.js"
import { fuzzParameters } from "../fuzz.test-support.js"
import { Paths } from "../paths/paths.js"
import { socketPathIn } from "../rpc/socket-location.js"
import { inProcessDaemon, TestDaemonConfig, TestDaemonProcess } from "./daemon-core.test-support.js"
import { DaemonServerLive, MAX_REQUEST_CHARS } from "./daemon-server.js"
import { Readiness } from "./readiness.js"

// Whatever arrives on the daemon's socket (random bytes, broken JSON, frames of the wrong shape,
// a line longer than the request bound), the daemon answers it or drops that connection, and
// keeps answering everyone else.

const NoReadiness = Layer.succeed(Readiness, { ready: () => Effect.void, stopping: Effect.void })

/** How long one connection may stay open after its bytes are sent, before it counts as hung. */
const CONNECTION_BOUND_MS = 30_000

interface Outcome {
  readonly lines: ReadonlyArray<string>
  readonly closedBy: "daemon" | "error"
}

/** Sends `bytes`, half-closes, and gathers what comes back until the daemon closes the connection. */
const send = (socket: string, bytes: Uint8Array) =>
  new Promise<Outcome>((resolve, reject) => {
    const connection = Net.createConnection(socket)
    const chunks: Array<Buffer> = []
    const timer = setTimeout(() => {
      connection.destroy()
      reject(new Error(`the daemon kept a connection open ${CONNECTION_BOUND_MS} ms after its input ended`))
    }, CONNECTION_BOUND_MS)
    const done = (closedBy: Outcome["closedBy"]) => {
      clearTimeout(timer)
      const text = Buffer.concat(chunks).toString("utf8")
      resolve({ lines: text.split("\n").filter((l) => l.length > 0), closedBy })
    }
    connection.on("connect", () => connection.end(bytes))
    connection.on("data", (chunk: Buffer) => chunks.push(chunk))
    connection.on("close", () => done("daemon"))
    // The daemon may reset a connection it refuses (EPIPE/ECONNRESET): that is an answer too.
    connection.on("error", () => done("error"))
  })

/** Sends one frame on a connection left open until its Exit arrives (or the daemon closes it). */
const askOpen = (socket: string, frame: string) =>
  new Promise<Record<string, unknown> | undefined>((resolve, reject) => {
    const connection = Net.createConnection(socket)
    let buffered = ""
    const timer = setTimeout(() => {
      connection.destroy()
      reject(new Error(`no answer within ${CONNECTION_BOUND_MS} ms`))
    }, CONNECTION_BOUND_MS)
    const done = (exit: Record<string, unknown> | undefined) => {
      clearTimeout(timer)
      connection.destroy()
      resolve(exit)
    }
    connection.setEncoding("utf8")
    connection.on("connect", () => connection.write(frame))
    connection.on("data", (chunk: string) => {
      buffered += chunk
      const lines = buffered.split("\n")
      buffered = lines.pop() ?? ""
      const exit = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((m) => m._tag === "Exit")
      if (exit !== undefined) done(exit)
    })
    connection.on("close", () => done(undefined))
    connection.on("error", () => done(undefined))
  })

/** Request ids are decimal integers (the RPC protocol's bigints). */
const ping = (id: string) => `${JSON.stringify({ _tag: "Request", id, tag: "Ping", payload: {}, headers: [] })}\n`

/** Frames close to valid: real envelopes with wrong tags, ids, payloads and headers. */
const nearFrame = fc
  .record({
    _tag: fc.oneof(fc.constantFrom("Request", "Ack", "Interrupt", "Eof", "Ping"), fc.string()),
    id: fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.bigInt().map(String)),
    tag: fc.oneof(
      fc.constantFrom("Ping", "Search", "Recent", "Context", "PromptRecall", "Index", "Forget", "ContextStatus"),
      fc.string()
    ),
    payload: fc.anything(),
    headers: fc.oneof(fc.constant([]), fc.anything())
  })
  .map((frame) => `${JSON.stringify(frame)}\n`)

const input = fc.oneof(
  { weight: 3, arbitrary: fc.uint8Array({ maxLength: 2048 }) },
  { weight: 3, arbitrary: nearFrame.map((s) => Buffer.from(s)) },
  { weight: 2, arbitrary: fc.array(nearFrame, { maxLength: 5 }).map((s) => Buffer.from(s.join(""))) },
  { weight: 2, arbitrary: fc.json().map((s) => Buffer.from(`${s}\n`)) },
  {
    weight: 1,
    arbitrary: fc.string({ maxLength: 200 }).map((s) => Buffer.from(`${s.replace(/\n/g, "")}\n${ping("after")}`))
  }
)

describe("raw bytes on the daemon's socket", () => {
  it.live(
    "never stop the daemon: every connection is answered or closed, and a Ping after each is answered",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const release = yield* Deferred.make<void>()
          yield* Effect.addFinalizer(() => Deferred.succeed(release, undefined))
          const context = yield* Layer.build(
            DaemonServerLive.pipe(
              Layer.provideMerge(inProcessDaemon(release)),
              Layer.provide(Layer.mergeAll(NodeSocketBinderLive, NoReadiness, TestDaemonConfig, TestDaemonProcess))
            )
          )
          const socket = socketPathIn((yield* Paths.pipe(Effect.provide(context))).stateDir)

          // Ping reads the filesystem (is the database it holds still at its path?), so its probe
          // keeps the connection open until the answer arrives, as every client does.
          const answersPing = async (id: string) => {
            const exit = await askOpen(socket, ping(id))
            return exit?.requestId === id && (exit.exit as { _tag?: string } | undefined)?._tag === "Success"
          }

          let tried = 0
          let answered = 0
          yield* Effect.promise(() =>
            fc.assert(
              fc.asyncProperty(input, async (bytes) => {
                tried++
                const outcome = await send(socket, bytes)
                // Whatever it says is whole NDJSON: one JSON value per line.
                for (const line of outcome.lines) expect(() => JSON.parse(line)).not.toThrow()
                if (outcome.lines.length > 0) answered++
                expect(await answersPing(String(1_000_000 + tried))).toBe(true)
              }),
              fuzzParameters(300)
            )
          )

          // One line past the request bound: refused, and the daemon still answers.
          const huge = Buffer.alloc(MAX_REQUEST_CHARS + 1024, "a")
          const outcome = yield* Effect.promise(() => send(socket, huge))
          for (const line of outcome.lines) expect(() => JSON.parse(line)).not.toThrow()
          expect(yield* Effect.promise(() => answersPing("2000000"))).toBe(true)

          console.log(
            `daemon socket: ${tried + 1} raw inputs tried (${answered} answered, the rest closed), the daemon answered a Ping after each`
          )
        })
      ),
    { timeout: 600_000 }
  )
})
