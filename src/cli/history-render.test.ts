import { describe, expect, it } from "vitest"
import { plainStyle } from "../installer/render-text.js"
import { JobId, JobView } from "../jobs/job.js"
import { renderJob, renderProgress } from "./history-render.js"

const job = (over: Partial<ConstructorParameters<typeof JobView>[0]>) =>
  new JobView({
    id: JobId.make("00000000-0000-4000-8000-000000000007"),
    kind: "repair",
    state: "completed",
    progress_done: 6,
    progress_total: 6,
    counts: {},
    error: null,
    attempts: 1,
    submitted_at: "2026-03-01T10:00:00.000Z",
    started_at: null,
    updated_at: "2026-03-01T10:00:00.000Z",
    finished_at: null,
    ...over
  })

describe("job progress in index-status", () => {
  it("names the unit both sides count", () => {
    expect(
      renderJob(job({ counts: { vectors_embedded: 6, messages_rechunked: 6 } }), plainStyle)
    ).toMatchInlineSnapshot(`
        "job 00000000-0000-4000-8000-000000000007 repair completed 6/6 chunks embedded
        vectors_embedded=6 messages_rechunked=6"
      `)
    expect(renderProgress(job({ kind: "import", progress_done: 2, progress_total: 5 }))).toBe("2/5 files")
    expect(renderProgress(job({ kind: "maintenance", progress_done: 4, progress_total: 4 }))).toBe("4/4 steps")
    expect(renderProgress(job({ kind: "other", progress_done: 1, progress_total: null }))).toBe("1/?")
  })

  it("never shows more done than the total", () => {
    expect(renderProgress(job({ progress_done: 12, progress_total: 6 }))).toBe("12/? chunks embedded")
  })
})
