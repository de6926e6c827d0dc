import { describe, expect, it } from "vitest"
import { plainStyle } from "../installer/render-text.js"
import { jobViewOf } from "../jobs/job-view.test-support.js"
import { CaptureStatus, noCapture } from "../retrieval/capture-status.js"
import { TranscriptSpan } from "../retrieval/contract.js"
import { RecentResponse, RecentTurn, TurnMessage } from "../retrieval/recent.js"
import { renderCapture, renderJob, renderProgress, renderRecent } from "./history-render.js"

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

describe("capture in index-status", () => {
  const capture = (over: Partial<CaptureStatus> = {}) => new CaptureStatus({ ...noCapture(), ...over })

  it("says when the hooks recorded nothing", () => {
    expect(renderCapture(capture())).toBe("capture: no hook events (hooks not installed, or no session since)")
  })

  it("counts events by type, what they led to, and names the last error", () => {
    expect(
      renderCapture(
        capture({
          events: { SessionStart: 2, UserPromptSubmit: 5, Stop: 4, SessionEnd: 1 },
          indexed_sessions: 2,
          pending: 1,
          null_paths: 1,
          errors: 1,
          last_event_at: "2026-03-01T10:00:00.000Z",
          last_error: "/home/a/.codex/sessions/x.jsonl no longer exists"
        })
      )
    ).toMatchInlineSnapshot(`
      "capture: 12 hook events (2 SessionStart, 5 UserPromptSubmit, 4 Stop, 1 SessionEnd); 2 sessions indexed, 1 pending, 1 awaiting a transcript path, 1 errors; last event 2026-03-01 10:00:00Z
        last error: /home/a/.codex/sessions/x.jsonl no longer exists"
    `)
  })
})

describe("recent --pretty", () => {
  const message = (context_id: string, role: string, text: string) =>
    new TurnMessage({
      context_id,
      role,
      kind: "message",
      timestamp: "2026-03-01T10:00:00.000Z",
      text,
      text_truncated: false,
      source_type: "codex_transcript",
      agent: "codex",
      source: new TranscriptSpan({
        agent: "codex",
        path: "/h/.codex/sessions/a.jsonl",
        line: 3,
        byte_start: 10,
        byte_end: 90
      })
    })
  const answer = new RecentResponse({
    since: null,
    until: null,
    project: null,
    agent: null,
    turns: [
      new RecentTurn({
        session_id: "019a0000-0000-7000-8000-000000000001",
        turn_id: null,
        turn_number: 1,
        project: "/home/dev/app",
        first_activity: "2026-03-01T10:00:00.000Z",
        last_activity: "2026-03-01T10:01:00.000Z",
        message_count: 2,
        messages: [
          message("c17", "user", "Why does the build fail?"),
          message("c18", "assistant", "A missing import.")
        ],
        messages_not_shown: 0
      })
    ],
    offset: 0,
    limit: 20,
    next_offset: null,
    truncated: false,
    returned_chars: 40,
    unknown_timestamps: 0
  })

  it("shows each turn's context id, for blctx context", () => {
    const header = renderRecent(answer, plainStyle).split("\n")[1] ?? ""
    expect(header).toContain("019a0000-0000-7000-8000-000000000001")
    expect(header).toMatch(/context c17$/)
  })
})
