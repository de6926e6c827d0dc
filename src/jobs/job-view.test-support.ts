import { JobId, JobView } from "./job.js"

/** Tests only: a job as the daemon reports it, completed unless `over` says otherwise. */
export const jobViewOf = (over: Partial<ConstructorParameters<typeof JobView>[0]> = {}) =>
  new JobView({
    id: JobId.make("00000000-0000-4000-8000-000000000007"),
    kind: "import",
    state: "completed",
    progress_done: 1,
    progress_total: 1,
    counts: {},
    error: null,
    attempts: 1,
    submitted_at: "2026-03-01T10:00:00.000Z",
    started_at: null,
    updated_at: "2026-03-01T10:00:00.000Z",
    finished_at: null,
    ...over
  })
