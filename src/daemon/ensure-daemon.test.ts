import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Option, TestClock } from "effect"
import { submitImport } from "../cli/history-commands.js"
import { identityOf, makeWorld, stepLayer, useActiveHome } from "../installer/steps/service-steps.test-support.js"
import { JobId, type JobView } from "../jobs/job.js"
import { jobViewOf } from "../jobs/job-view.test-support.js"
import { DaemonUnavailable } from "../rpc/errors.js"
import type { FakeAnswers } from "../rpc/fake-daemon.test-support.js"
import { SubmittedJob } from "../rpc/protocol.js"
import { withDaemon } from "./ensure-daemon.js"

// Only reaching the daemon is retried: a request that is not safe to repeat runs once.

const fresh = useActiveHome()
const JOB = JobId.make("00000000-0000-4000-8000-0000000000b1")

const jobIn = (state: JobView["state"]) => jobViewOf({ id: JOB, state, progress_done: state === "completed" ? 1 : 0 })

/** A daemon whose first answer to a poll is too slow (the client's bound trips), then answers. */
const slowFirstPoll = () => {
  const calls = { submit: 0, status: 0 }
  const client: FakeAnswers = {
    SubmitJob: () =>
      Effect.sync(() => {
        calls.submit++
        return new SubmittedJob({ job: jobIn("queued"), superseded: [] })
      }),
    JobStatus: () =>
      Effect.suspend(() => {
        calls.status++
        return calls.status === 1
          ? Effect.fail(
              new DaemonUnavailable({ socket: "/s", reason: "no answer within 30 seconds", remediation: "wait" })
            )
          : Effect.succeed(jobIn("completed"))
      })
  }
  return { calls, client }
}

describe("withDaemon", () => {
  it.live("a slow poll of index --wait is asked again; the job is submitted exactly once", () => {
    const { calls, client } = slowFirstPoll()
    const world = makeWorld({ pid: 7, answering: true, client })
    return Effect.gen(function* () {
      const job = yield* withDaemon("30 seconds", (c) => submitImport(c, ["/history/a.jsonl"], true))
      expect(job.state).toBe("completed")
      expect(calls.submit).toBe(1)
      expect(calls.status).toBe(2)
      expect(world.ensureRunningCalls).toBe(0)
    }).pipe(Effect.provide(stepLayer(fresh.home(), world)))
  })

  it.live("a daemon that does not answer at first is started, and the request is then sent once", () => {
    const { calls, client } = slowFirstPoll()
    const world = makeWorld({ pid: null, answering: false, client })
    return Effect.gen(function* () {
      const submitted = yield* withDaemon("30 seconds", (c) => submitImport(c, ["/history/a.jsonl"], false))
      expect(submitted.state).toBe("queued")
      expect(world.ensureRunningCalls).toBe(1)
      expect(calls.submit).toBe(1)
    }).pipe(Effect.provide(stepLayer(fresh.home(), world)))
  })

  it.live("a request whose answer never comes fails; it is not sent a second time", () => {
    let submits = 0
    const client: FakeAnswers = {
      SubmitJob: () =>
        Effect.suspend(() => {
          submits++
          return Effect.fail(
            new DaemonUnavailable({ socket: "/s", reason: "no answer within 30 seconds", remediation: "" })
          )
        })
    }
    const world = makeWorld({ pid: 7, answering: true, client })
    return Effect.gen(function* () {
      const error = yield* Effect.flip(withDaemon("30 seconds", (c) => submitImport(c, ["/history/a.jsonl"], false)))
      expect(error.message).toContain("no answer within 30 seconds")
      expect(submits).toBe(1)
      expect(world.ensureRunningCalls).toBe(0)
    }).pipe(Effect.provide(stepLayer(fresh.home(), world)))
  })

  it.live("a daemon still dying when asked (its socket accepts, then drops the connection) is started again", () => {
    // A kill -9 being torn down: connections are accepted until its last thread exits, then
    // dropped, and the service manager sees a socket that answers, so it starts nothing at first.
    let pings = 0
    let submits = 0
    const client: FakeAnswers = {
      Ping: () =>
        Effect.suspend(() => {
          pings++
          return pings <= 2
            ? Effect.fail(
                new DaemonUnavailable({
                  socket: "/s",
                  reason: "the connection was lost: An error occurred during Write (EPIPE)",
                  remediation: ""
                })
              )
            : Effect.succeed(identityOf(fresh.paths(), 7))
        }),
      SubmitJob: () =>
        Effect.sync(() => {
          submits++
          return new SubmittedJob({ job: jobIn("queued"), superseded: [] })
        })
    }
    const world = makeWorld({ pid: 7, answering: true, client })
    return Effect.gen(function* () {
      const submitted = yield* withDaemon("30 seconds", (c) => submitImport(c, ["/history/a.jsonl"], false))
      expect(submitted.state).toBe("queued")
      expect(pings).toBe(3)
      expect(world.ensureRunningCalls).toBe(2)
      expect(submits).toBe(1)
    }).pipe(Effect.provide(stepLayer(fresh.home(), world)))
  })

  it.live("a daemon that accepts the connection but does not answer is not started again or waited on", () => {
    let pings = 0
    let submits = 0
    const client: FakeAnswers = {
      Ping: () =>
        Effect.suspend(() => {
          pings++
          return Effect.fail(
            new DaemonUnavailable({
              socket: "/s",
              reason: "blctxd (pid 7) is not answering: it may be stopped or overloaded",
              remediation: "If it was stopped, resume it: `kill -CONT 7`",
              not_answering: true
            })
          )
        }),
      SubmitJob: () =>
        Effect.sync(() => {
          submits++
          return new SubmittedJob({ job: jobIn("queued"), superseded: [] })
        })
    }
    const world = makeWorld({ pid: 7, answering: true, client })
    return Effect.gen(function* () {
      const error = yield* Effect.flip(withDaemon("30 seconds", (c) => submitImport(c, ["/history/a.jsonl"], false)))
      expect(error.message).toContain("blctxd (pid 7) is not answering")
      expect(error.message).toContain("kill -CONT 7")
      expect(pings).toBe(1)
      expect(world.ensureRunningCalls).toBe(0)
      expect(submits).toBe(0)
    }).pipe(Effect.provide(stepLayer(fresh.home(), world)))
  })

  it.effect("the first Ping is bounded by the call deadline even when the call is given longer", () => {
    const client: FakeAnswers = { Ping: () => Effect.never }
    const world = makeWorld({ pid: 7, answering: true, client })
    return Effect.gen(function* () {
      const pinging = yield* Effect.fork(Effect.flip(withDaemon("30 seconds", (c) => c.Ping())))
      // Effect time moves in small steps, each after real I/O (the manifest read) could progress.
      let advancedMs = 0
      while (Option.isNone(yield* Fiber.poll(pinging)) && advancedMs < 30_000) {
        yield* Effect.promise(() => new Promise((resume) => setImmediate(resume)))
        yield* TestClock.adjust("100 millis")
        advancedMs += 100
      }
      const error = yield* Fiber.join(pinging)
      expect(advancedMs).toBeLessThan(6_000)
      expect(error).toMatchObject({ _tag: "DaemonUnavailable", not_answering: true })
      expect(world.ensureRunningCalls).toBe(0)
    }).pipe(Effect.provide(stepLayer(fresh.home(), world)))
  })

  it.live("a daemon that never answers is given up on after the service manager was asked twice", () => {
    const client: FakeAnswers = {
      Ping: () => Effect.fail(new DaemonUnavailable({ socket: "/s", reason: "permission denied", remediation: "" }))
    }
    const world = makeWorld({ pid: 7, answering: true, client })
    return Effect.gen(function* () {
      const error = yield* Effect.flip(withDaemon("30 seconds", (c) => submitImport(c, ["/history/a.jsonl"], false)))
      expect(error.message).toContain("permission denied")
      expect(world.ensureRunningCalls).toBe(2)
    }).pipe(Effect.provide(stepLayer(fresh.home(), world)))
  })
})
