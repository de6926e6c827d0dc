import { Data } from "effect"
import type { JobId } from "./job.js"

/** The job was cancelled or superseded while it ran: its current step is rolled back and it stops. */
export class JobStopped extends Data.TaggedError("JobStopped")<{
  readonly jobId: JobId
}> {}

/** A job kind gave up; the job is marked failed with this message. */
export class JobFailed extends Data.TaggedError("JobFailed")<{
  readonly message: string
}> {}
