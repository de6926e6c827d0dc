import { describe, expect, it } from "vitest"
import { plainStyle } from "../installer/render-text.js"
import { jobViewOf } from "../jobs/job-view.test-support.js"
import { renderJob, renderProgress } from "./history-render.js"

const job = (over: Parameters<typeof jobViewOf>[0]) =>
  jobViewOf({ kind: "repair", progress_done: 6, progress_total: 6, ...over })

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
