import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { JobId, JobView } from "../../jobs/job.js"
import { ContextStatusResponse } from "../../retrieval/context-status.js"
import { Coverage } from "../../retrieval/coverage.js"
import { DaemonUnavailable } from "../../rpc/errors.js"
import { discoverySnapshotPath } from "../../transcripts/discovery-snapshot.js"
import type { Step } from "../step.js"
import { HISTORY_INDEX_FILE, historyIndexStep } from "./history-index.js"
import { diagnoseOf, makeWorld, runOf, stepLayer, useActiveHome } from "./service-steps.test-support.js"

const fresh = useActiveHome()

const paths = fresh.paths
const JOB = JobId.make("00000000-0000-4000-8000-00000000000a")

describe("history_index uninstall", () => {
  it.effect("keeps the indexed history without --purge and says it goes with the database with --purge", () => {
    const world = makeWorld({
      pid: 7,
      answering: true,
      client: { CancelJobs: () => Effect.succeed({ cancelled: [JOB] }) }
    })
    return Effect.gen(function* () {
      const step: Step = yield* historyIndexStep
      const kept = yield* step.uninstall(runOf("uninstall"))
      expect(kept.detail).toBe(`cancelled 1 queued or running imports; indexed history kept in ${paths().database}`)
      const purged = yield* step.uninstall(runOf("uninstall", { purge: true }))
      expect(purged.detail).toBe(
        `cancelled 1 queued or running imports; the indexed history goes with ${paths().database}, which data_directory removes (--purge)`
      )
      expect(purged.detail).not.toContain("kept")
      world.pid = null
      world.answering = false
      const gone = yield* step.uninstall(runOf("uninstall", { purge: true }))
      expect(gone.detail).toBe(
        `no daemon running: no import to cancel; the indexed history goes with ${paths().database}, which data_directory removes (--purge)`
      )
    }).pipe(Effect.provide(stepLayer(fresh.home(), world)))
  })

  it.effect("says no daemon is running only when none is: a daemon that does not answer in time fails the step", () => {
    const world = makeWorld({
      pid: 7,
      answering: true,
      client: {
        CancelJobs: () =>
          Effect.fail(
            new DaemonUnavailable({ socket: "/run/blctxd.sock", reason: "no answer within 10s", remediation: "wait" })
          )
      }
    })
    return Effect.gen(function* () {
      const step: Step = yield* historyIndexStep
      const failed = yield* Effect.flip(step.uninstall(runOf("uninstall")))
      expect(failed.detail).toContain("could not cancel queued or running imports")
      expect(failed.detail).toContain("no answer within 10s")
      expect(failed.detail).not.toContain("no daemon running")
    }).pipe(Effect.provide(stepLayer(fresh.home(), world)))
  })
})

describe("history_index diagnose (doctor)", () => {
  it.effect("reports the recorded import's outcome and what it could not use", () => {
    const job = new JobView({
      id: JOB,
      kind: "import",
      state: "partial",
      progress_done: 2,
      progress_total: 2,
      counts: { records: 40, unclassified: 3, parse_errors: 1, files_imported: 1, files_unreadable: 1 },
      error: null,
      attempts: 1,
      submitted_at: "2026-03-01T10:00:00.000Z",
      started_at: "2026-03-01T10:00:00.000Z",
      updated_at: "2026-03-01T10:00:01.000Z",
      finished_at: "2026-03-01T10:00:01.000Z"
    })
    const status = new ContextStatusResponse({
      index_state: "ready",
      query_mode: "lexical",
      query_mode_reason: null,
      model_fingerprint: null,
      coverage: new Coverage({
        files: { total: 1, indexed: 0, partial: 1, conflict: 0 },
        sessions: 1,
        messages: 4,
        chunks: 4,
        vectors: [],
        vectors_pending: 4,
        unknown_timestamps: 0,
        redactions: 0,
        sources_changed: 0,
        sources_missing: 0,
        changed_sources: [],
        partial_imports: [{ path: "/codex/sessions/a.jsonl", unclassified: 3, parse_errors: 1 }],
        conflicts: [],
        capture: ""
      }),
      recent_jobs: [job]
    })
    const world = makeWorld({
      pid: 7,
      answering: true,
      client: { JobStatus: () => Effect.succeed(job), ContextStatus: () => Effect.succeed(status) }
    })
    return Effect.gen(function* () {
      const step: Step = yield* historyIndexStep
      const nothing = yield* diagnoseOf(step, runOf("doctor"))
      expect(nothing.detail).toContain("nothing deeper to check: no import recorded")
      Fs.writeFileSync(
        NodePath.join(paths().stateDir, HISTORY_INDEX_FILE),
        JSON.stringify({ version: 1, job_id: JOB, paths: ["/codex/sessions/a.jsonl", "/codex/sessions/b.jsonl"] })
      )
      const found = yield* diagnoseOf(step, runOf("doctor"))
      expect(found.detail).toBe(
        `import job ${JOB} partial; 40 records read: 3 unclassified, 1 unreadable lines; files: 1 unreadable, 0 missing, 0 in conflict; index now: 1 partial and 0 conflicting sources, 0 changed and 0 missing since import; partial: /codex/sessions/a.jsonl (3 unclassified, 1 unreadable lines)`
      )
    }).pipe(Effect.provide(stepLayer(fresh.home(), world)))
  })
})

describe("history_index with no session yet", () => {
  const writeSnapshot = (newest: ReadonlyArray<string>) =>
    Fs.writeFileSync(
      discoverySnapshotPath(paths().stateDir),
      JSON.stringify({
        version: 1,
        discovered_at: "2026-03-01T10:00:00.000Z",
        codex_home: paths().codexHome,
        total: newest.length,
        active: newest.length,
        archived: 0,
        compressed: { count: 0, paths: [] },
        skipped_links: 0,
        newest: newest.map((path) => ({ path, size: 1, modified_at: "2026-03-01T09:00:00.000Z", archived: false }))
      })
    )

  it.effect("install, and status after it, pass with nothing to index when discovery found no session", () => {
    const world = makeWorld({ pid: 7, answering: true })
    return Effect.gen(function* () {
      writeSnapshot([])
      const step: Step = yield* historyIndexStep
      expect((yield* step.install(runOf("install"))).detail).toBe(
        "nothing to index yet: session_discovery found no sessions"
      )
      // What install's own verify and every later status run.
      expect((yield* step.verify(runOf("status"))).detail).toBe(
        "nothing to index yet: session_discovery found no sessions"
      )
    }).pipe(Effect.provide(stepLayer(fresh.home(), world)))
  })

  it.effect("fails when discovery found sessions that no import was run for", () => {
    const world = makeWorld({ pid: 7, answering: true })
    return Effect.gen(function* () {
      writeSnapshot(["/codex/sessions/a.jsonl"])
      const step: Step = yield* historyIndexStep
      const failed = yield* Effect.flip(step.verify(runOf("status")))
      expect(failed.detail).toBe("no history import has been run, though session_discovery found 1 session files")
      expect(failed.remediation).toBe("Run: blctx install codex --step history_index")
    }).pipe(Effect.provide(stepLayer(fresh.home(), world)))
  })
})
