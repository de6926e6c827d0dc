import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, TestClock, TestServices } from "effect"
import { JobId, JobView } from "../../jobs/job.js"
import { ContextStatusResponse } from "../../retrieval/context-status.js"
import { Coverage } from "../../retrieval/coverage.js"
import { DaemonStoreError, DaemonUnavailable, JobNotFound } from "../../rpc/errors.js"
import { socketPathIn } from "../../rpc/socket-location.js"
import { CURRENT_SCHEMA_VERSION } from "../../store/migrations.js"
import { describeError, type Step } from "../step.js"
import { DOCTOR_PINGS, HEALTH_TIMEOUT, serviceHealthStep } from "./service-health.js"
import {
  diagnoseOf,
  type FakeWorld,
  INSTALLATION,
  identityOf,
  makeWorld,
  runOf,
  stepLayer,
  useActiveHome
} from "./service-steps.test-support.js"

const fresh = useActiveHome()

const paths = fresh.paths

const importJob = new JobView({
  id: JobId.make("00000000-0000-4000-8000-000000000001"),
  kind: "import",
  state: "completed",
  progress_done: 2,
  progress_total: 2,
  counts: { messages_added: 6 },
  error: null,
  attempts: 1,
  submitted_at: "2026-03-01T10:00:00.000Z",
  started_at: "2026-03-01T10:00:00.000Z",
  updated_at: "2026-03-01T10:00:01.000Z",
  finished_at: "2026-03-01T10:00:01.000Z"
})

/** The daemon's answer right after history_index imported six messages of two sessions. */
const sixMessages = new ContextStatusResponse({
  index_state: "model_missing",
  query_mode: "lexical",
  query_mode_reason: "no verified embedding model: not installed",
  model_fingerprint: null,
  coverage: new Coverage({
    files: { total: 2, indexed: 2, partial: 0, conflict: 0 },
    sessions: 2,
    messages: 6,
    chunks: 6,
    vectors: [],
    vectors_pending: 6,
    unknown_timestamps: 0,
    redactions: 0,
    sources_changed: 0,
    sources_missing: 0,
    changed_sources: [],
    partial_imports: [],
    conflicts: [],
    capture: ""
  }),
  recent_jobs: [importJob]
})

/** A daemon that answers, whose Ping still carries the stale "empty" index state. */
const healthyWorld = (over: Partial<FakeWorld["client"]> = {}) =>
  makeWorld({
    pid: 4242,
    answering: true,
    client: {
      JobStatus: ({ job_id: id }) => Effect.fail(new JobNotFound({ job_id: id })),
      ContextStatus: () => Effect.succeed(sixMessages),
      ...over
    }
  })

describe("service_health", () => {
  it.effect("says what the index holds now, not Ping's stale index_state", () => {
    const world = healthyWorld()
    return Effect.gen(function* () {
      const step: Step = yield* serviceHealthStep
      const checked = yield* step.verify(runOf("status"))
      expect(checked.detail).toBe(
        `blctxd answered in 0 ms (pid 4242, version 0.0.0-test, schema v${CURRENT_SCHEMA_VERSION}, ${paths().database}); a read through the query workers took 0 ms; index: 6 messages in 2 sessions, 6 chunks (vectors: 0 ready, 6 pending); state model_missing, queries lexical (no verified embedding model: not installed)`
      )
      expect(checked.detail).not.toContain("empty")
    }).pipe(Effect.provide(stepLayer(fresh.home(), world)))
  })

  it.effect("a daemon that does not answer within the bound fails with the phase, the bound and the socket", () => {
    const world = healthyWorld({ Ping: () => Effect.never } as Partial<FakeWorld["client"]>)
    return Effect.gen(function* () {
      const step: Step = yield* serviceHealthStep
      const fiber = yield* Effect.fork(Effect.flip(step.verify(runOf("doctor"))))
      // Wait (on the event, not the clock) until the round trip's bound is armed, then let it elapse.
      while ((yield* TestClock.sleeps()).length === 0) yield* TestServices.provideLive(Effect.sleep("5 millis"))
      yield* TestClock.adjust(Duration.sum(HEALTH_TIMEOUT, "1 second"))
      const failure = yield* Fiber.join(fiber)
      expect(failure.detail).toBe(
        `blctxd on ${socketPathIn(paths().stateDir)} did not finish connect, Ping, then a database read through the query workers within ${Duration.format(HEALTH_TIMEOUT)}; it may be overloaded or hung`
      )
      expect(failure.errorTag).toBe("TimeoutException")
      expect(failure.remediation).not.toContain("doctor")
      expect(failure.remediation).toContain("blctx status --step background_service")
    }).pipe(Effect.provide(stepLayer(fresh.home(), world)))
  })

  it.effect("an unavailable daemon, even one whose error says nothing, yields a detail that says what happened", () => {
    const world = makeWorld({ unavailable: "" })
    return Effect.gen(function* () {
      const step: Step = yield* serviceHealthStep
      const failure = yield* Effect.flip(step.verify(runOf("doctor")))
      expect(failure.detail).toBe(
        `blctxd on ${socketPathIn(paths().stateDir)} did not answer (connect, Ping, then a database read through the query workers): DaemonUnavailable (with no message)`
      )
      expect(failure.errorTag).toBe("DaemonUnavailable")
      expect(failure.remediation).not.toMatch(/^Run: blctx doctor/)
      expect(failure.remediation).toContain(`blctxd-${INSTALLATION}`)
      world.unavailable = "connection refused (the daemon is not running; a stale socket remains)"
      const refused = yield* Effect.flip(step.verify(runOf("status")))
      expect(refused.detail).toContain("connection refused (the daemon is not running; a stale socket remains)")
    }).pipe(Effect.provide(stepLayer(fresh.home(), world)))
  })

  it.effect("a failing database read names the error; an index status that fails is said, not hidden", () => {
    const world = healthyWorld({
      JobStatus: () => Effect.fail(new DaemonStoreError({ path: "/db", reason: "disk I/O error", remediation: "x" })),
      ContextStatus: () => Effect.fail(new DaemonStoreError({ path: "/db", reason: "", remediation: "x" }))
    })
    return Effect.gen(function* () {
      const step: Step = yield* serviceHealthStep
      const failure = yield* Effect.flip(step.verify(runOf("status")))
      expect(failure.detail).toBe(
        "blctxd (pid 4242) answered Ping but could not read its database through the query workers: DaemonStoreError: disk I/O error"
      )
      world.client = { ...world.client, JobStatus: ({ job_id: id }) => Effect.fail(new JobNotFound({ job_id: id })) }
      const passed = yield* step.verify(runOf("status"))
      expect(passed.detail).toContain(
        `index: not known (blctxd on ${socketPathIn(paths().stateDir)} did not answer (ContextStatus): DaemonStoreError (with no message))`
      )
    }).pipe(Effect.provide(stepLayer(fresh.home(), world)))
  })

  it.effect("doctor times several Pings and reports the newest job of each kind", () => {
    let pings = 0
    const world = healthyWorld()
    world.client = {
      ...world.client,
      Ping: () =>
        Effect.sync(() => {
          pings++
          return identityOf(paths(), 4242)
        })
    }
    return Effect.gen(function* () {
      const step: Step = yield* serviceHealthStep
      const found = yield* diagnoseOf(step, runOf("doctor"))
      expect(pings).toBe(DOCTOR_PINGS)
      expect(found.detail).toBe(`${DOCTOR_PINGS} Pings: min 0 ms, median 0 ms, max 0 ms; newest jobs: import completed`)
    }).pipe(Effect.provide(stepLayer(fresh.home(), world)))
  })

  it("describeError never returns an empty string", () => {
    expect(describeError(new DaemonUnavailable({ socket: "/s", reason: "", remediation: "r" }))).toBe(
      "DaemonUnavailable (with no message)"
    )
    expect(describeError(new Error(""))).toBe("Error (with no message)")
    expect(describeError("")).toBe("an unnamed error")
    expect(describeError(new JobNotFound({ job_id: "x" }))).toBe("JobNotFound: no job x")
  })
})
