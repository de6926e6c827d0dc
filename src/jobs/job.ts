import { Schema } from "effect"

/** A durable job's id (UUID), returned by SubmitJob as soon as its row is committed. */
export const JobId = Schema.UUID.pipe(Schema.brand("JobId"))
export type JobId = typeof JobId.Type

export const JOB_STATES = ["queued", "running", "completed", "partial", "failed", "superseded", "cancelled"] as const
export const JobState = Schema.Literal(...JOB_STATES)
export type JobState = typeof JobState.Type

/** States a job never leaves: replay, reinstall and restarts leave these rows alone. */
export const TERMINAL_STATES: ReadonlyArray<JobState> = ["completed", "partial", "failed", "superseded", "cancelled"]

/** A job kind's name: lower snake case, e.g. `maintenance`, `import`. */
export const JobKindName = Schema.String.pipe(Schema.pattern(/^[a-z][a-z0-9_]{0,39}$/), Schema.brand("JobKindName"))
export type JobKindName = typeof JobKindName.Type

/** Named counters a job reports (rows written, files skipped, ...). */
export const JobCounts = Schema.Record({ key: Schema.String, value: Schema.Int })
export type JobCounts = typeof JobCounts.Type

/** What anyone may see about a job: the RPC answer to JobStatus. */
export class JobView extends Schema.Class<JobView>("JobView")({
  id: JobId,
  kind: Schema.String,
  state: JobState,
  progress_done: Schema.Int,
  progress_total: Schema.NullOr(Schema.Int),
  counts: JobCounts,
  error: Schema.NullOr(Schema.String),
  attempts: Schema.Int,
  submitted_at: Schema.String,
  started_at: Schema.NullOr(Schema.String),
  updated_at: Schema.String,
  finished_at: Schema.NullOr(Schema.String)
}) {}

/** One `jobs` row as SQLite returns it: the view's columns, and what only the runner reads. */
export const JobRow = Schema.Struct({
  ...JobView.fields,
  params: Schema.String,
  counts: Schema.parseJson(JobCounts),
  checkpoint: Schema.NullOr(Schema.String)
})
export type JobRow = typeof JobRow.Type

export const toView = (row: JobRow): JobView =>
  new JobView({
    id: row.id,
    kind: row.kind,
    state: row.state,
    progress_done: row.progress_done,
    progress_total: row.progress_total,
    counts: row.counts,
    error: row.error,
    attempts: row.attempts,
    submitted_at: row.submitted_at,
    started_at: row.started_at,
    updated_at: row.updated_at,
    finished_at: row.finished_at
  })
