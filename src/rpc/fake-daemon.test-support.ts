import { type Rpc, type RpcGroup, RpcTest } from "@effect/rpc"
import { Duration, Effect, Layer, type Scope } from "effect"
import { Admission } from "./admission.js"
import { type BlctxClient, boundClient, type DaemonRpc } from "./client.js"
import { DaemonRpcs } from "./protocol.js"
import { type QueryRpc, QueryRpcs } from "./query-protocol.js"
import { QueryReads } from "./query-reads.js"

/**
 * A procedure's answer in a test: its success, or an effect that succeeds or fails (with one of
 * the procedure's errors, or `DaemonUnavailable` as the client reports a transport failure).
 */
export type FakeAnswer<R> = (payload: Rpc.Payload<R>) => Rpc.Success<R> | Effect.Effect<Rpc.Success<R>, unknown>

/** Answers by procedure, as the group names them (`Ping`, `Search`, ...). */
export type Answers<Rpcs extends Rpc.Any> = { readonly [R in Rpcs as R["_tag"]]?: FakeAnswer<R> }
export type FakeAnswers = Answers<DaemonRpc>

export interface FakeCall {
  readonly method: string
  readonly request: unknown
}

/**
 * The group's handlers as a layer: each procedure gives its answer (any other dies: the test did
 * not expect it), and `calls` records each procedure asked, in order.
 */
const answering = <Rpcs extends Rpc.Any>(
  group: RpcGroup.RpcGroup<Rpcs>,
  answers: Answers<Rpcs>,
  calls: Array<FakeCall>
): Layer.Layer<Rpc.ToHandler<Rpcs>> => {
  const given = answers as Readonly<Record<string, ((payload: unknown) => unknown) | undefined>>
  const handler = (tag: string) => (payload: unknown) =>
    Effect.suspend(() => {
      calls.push({ method: tag, request: payload })
      const answer = given[tag]
      if (answer === undefined) return Effect.dieMessage(`unexpected call ${tag}`)
      const value = answer(payload)
      return Effect.isEffect(value) ? value : Effect.succeed(value)
    })
  const handlers = Object.fromEntries([...group.requests.keys()].map((tag) => [tag, handler(tag)]))
  // One handler per procedure of the group; each answer is typed by Answers above.
  return group.toLayer(handlers as never) as Layer.Layer<Rpc.ToHandler<Rpcs>>
}

/** Admission that admits everything: the fake daemon is never busy unless an answer says so. */
const AdmitAll = Layer.succeed(Admission, ({ next }) => next)

/**
 * A daemon client for tests: `RpcTest.makeClient` over `DaemonRpcs` with the given answers,
 * behind the same bounded client the socket's callers get (no deadline unless given one: a test
 * bounds calls itself, on its own clock).
 */
export const fakeDaemonClient = (
  answers: FakeAnswers,
  options: { readonly socketPath?: string; readonly timeout?: Duration.DurationInput } = {}
): Effect.Effect<{ readonly client: BlctxClient; readonly calls: ReadonlyArray<FakeCall> }, never, Scope.Scope> =>
  Effect.gen(function* () {
    const calls: Array<FakeCall> = []
    const client = yield* RpcTest.makeClient(DaemonRpcs).pipe(
      Effect.provide(Layer.merge(answering(DaemonRpcs, answers, calls), AdmitAll))
    )
    const socketPath = options.socketPath ?? "/home/a/.local/state/blctx/blctxd.sock"
    return { client: boundClient(client, { socketPath, timeout: options.timeout ?? Duration.infinity }), calls }
  })

/** `QueryReads` for tests: `RpcTest.makeClient` over the workers' group with the given answers. */
export const fakeQueryReads = (answers: Answers<QueryRpc>) =>
  Layer.scoped(QueryReads, RpcTest.makeClient(QueryRpcs)).pipe(Layer.provide(answering(QueryRpcs, answers, [])))
