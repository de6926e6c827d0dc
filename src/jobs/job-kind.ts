import type { SqlClient } from "@effect/sql"
import { Effect, Either, Option, type ParseResult, Schema } from "effect"
import { describeDecodeError } from "../domain/decode-issues.js"
import type { StoreError } from "../store/store-error.js"
import type { JobCounts, JobId } from "./job.js"
import { JobFailed, type JobStopped } from "./job-errors.js"

/** What a step records together with its work, in the same transaction. */
export interface StepCommit<C> {
  readonly checkpoint: C
  readonly progressDone: number
  readonly progressTotal?: number
  readonly counts?: JobCounts
}

/** What the runner hands a job kind for one attempt. */
export interface JobContext<C> {
  readonly jobId: JobId
  /** The last committed checkpoint: a replayed job resumes after it. */
  readonly checkpoint: Option.Option<C>
  /**
   * Runs `work` and records `next` in ONE write transaction: after a crash either both are
   * visible or neither is, so a replay never repeats committed work. Fails with `JobStopped`
   * (and rolls back) when the job was cancelled or superseded meanwhile.
   */
  readonly commit: <E>(
    work: Effect.Effect<void, E, SqlClient.SqlClient>,
    next: StepCommit<C>
  ) => Effect.Effect<void, E | JobStopped | StoreError>
}

/** How a job that ran to its end finished: `partial` when some items could not be done. */
export interface JobOutcome {
  readonly state: "completed" | "partial"
  readonly counts?: JobCounts
  readonly note?: string
}

/**
 * A kind's own typed reason to fail (the importer's `EmbeddingFailed`, for instance): its tag
 * names the cause, and its message, which names what to look at, is what the failed job records.
 */
export interface JobKindFailure {
  readonly _tag: string
  readonly message: string
}

/**
 * A kind of durable job. Params and checkpoints are schemas, so what is stored is decoded
 * again on replay. The importer plugs in as another kind with one checkpoint per file. `E` is
 * the kind's own failures, besides `JobFailed`: the job ends `failed` with the error's message.
 */
export interface JobKind<P, PI, C, CI, E extends JobKindFailure = never> {
  readonly name: string
  readonly params: Schema.Schema<P, PI>
  readonly checkpoint: Schema.Schema<C, CI>
  readonly run: (
    params: P,
    context: JobContext<C>
  ) => Effect.Effect<JobOutcome, E | JobFailed | JobStopped | StoreError, SqlClient.SqlClient>
}

/** A kind typed by its params and checkpoint schemas, and its own failures `E`. */
export type JobKindOf<
  P extends Schema.Schema.AnyNoContext,
  C extends Schema.Schema.AnyNoContext,
  E extends JobKindFailure = never
> = JobKind<Schema.Schema.Type<P>, Schema.Schema.Encoded<P>, Schema.Schema.Type<C>, Schema.Schema.Encoded<C>, E>

/** Untyped view of a kind, as the runner and the registry use it (types erased behind closures). */
export interface RegisteredJobKind {
  readonly name: string
  /** Decodes submitted params; returns their stored JSON text, or what was wrong. */
  readonly validate: (params: unknown) => Either.Either<string, string>
  readonly run: (
    paramsJson: string,
    checkpointJson: Option.Option<string>,
    context: Omit<JobContext<string>, "checkpoint">
  ) => Effect.Effect<JobOutcome, JobKindFailure | JobFailed | JobStopped | StoreError, SqlClient.SqlClient>
}

const failed = (message: string) => new JobFailed({ message })

/** What was wrong, short and redacted: submitted params come from clients and are echoed back to them. */
const format = (e: ParseResult.ParseError) => describeDecodeError(e, "params")

export const registerJobKind = <P, PI, C, CI, E extends JobKindFailure = never>(
  kind: JobKind<P, PI, C, CI, E>
): RegisteredJobKind => {
  const decodeParams = Schema.decodeUnknownEither(kind.params)
  const encodeParams = Schema.encodeEither(kind.params)
  const paramsJson = Schema.parseJson(kind.params)
  const checkpointJson = Schema.parseJson(kind.checkpoint)
  return {
    name: kind.name,
    validate: (params) =>
      decodeParams(params ?? {}).pipe(
        Either.flatMap(encodeParams),
        Either.map((encoded) => JSON.stringify(encoded)),
        Either.mapLeft(format)
      ),
    run: (paramsText, checkpointText, context) =>
      Effect.gen(function* () {
        const params = yield* Schema.decode(paramsJson)(paramsText).pipe(
          Effect.mapError((e) => failed(`stored params no longer decode: ${format(e)}`))
        )
        const checkpoint = yield* Option.match(checkpointText, {
          onNone: () => Effect.succeed(Option.none<C>()),
          onSome: (text) =>
            Schema.decode(checkpointJson)(text).pipe(
              Effect.map(Option.some),
              Effect.mapError((e) => failed(`stored checkpoint no longer decodes: ${format(e)}`))
            )
        })
        return yield* kind.run(params, {
          jobId: context.jobId,
          checkpoint,
          commit: (work, next) =>
            Effect.flatMap(Schema.encode(checkpointJson)(next.checkpoint).pipe(Effect.orDie), (text) =>
              context.commit(work, { ...next, checkpoint: text })
            )
        })
      })
  }
}

/** The kinds a daemon can run, by name. */
export type JobKindRegistry = ReadonlyMap<string, RegisteredJobKind>

export const makeRegistry = (kinds: ReadonlyArray<RegisteredJobKind>): JobKindRegistry =>
  new Map(kinds.map((k) => [k.name, k]))
