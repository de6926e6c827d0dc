import * as Fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { resolvePaths } from "../../paths/paths.js"
import type { Step } from "../step.js"
import { backgroundServiceStep, describeInstall, lastLoggedError } from "./background-service.js"
import { diagnoseOf, makeWorld, pathInputs, runOf, stepLayer, useActiveHome } from "./service-steps.test-support.js"

const fresh = useActiveHome()

const SUPERVISOR = "fake supervisor (tests)"

describe("background_service install says what it did", () => {
  it.effect("started on the first run, already running on a rerun that keeps the same daemon", () => {
    const world = makeWorld()
    return Effect.gen(function* () {
      const step: Step = yield* backgroundServiceStep
      const first = yield* step.install(runOf("install"))
      expect(first.detail).toBe(`started blctxd (pid 101) under the ${SUPERVISOR}`)
      const again = yield* step.install(runOf("install"))
      expect(again.detail).toBe(`blctxd already running (pid 101) under the ${SUPERVISOR}`)
      const third = yield* step.install(runOf("install"))
      expect(third.detail).toBe(again.detail)
    }).pipe(Effect.provide(stepLayer(fresh.home(), world)))
  })

  it.effect("restarted when it replaced a stale daemon, or when the supervisor restarts a healthy one", () => {
    const world = makeWorld({ pid: 77, answering: false })
    return Effect.gen(function* () {
      const step: Step = yield* backgroundServiceStep
      const stale = yield* step.install(runOf("install"))
      expect(stale.detail).toBe(
        `restarted blctxd (pid 101) under the ${SUPERVISOR}; it replaced a stale blctxd (pid 77) that did not answer`
      )
      world.restartsOnInstall = true
      const restarted = yield* step.install(runOf("install"))
      expect(restarted.detail).toBe(`restarted blctxd (pid 102) under the ${SUPERVISOR}; it replaced pid 101`)
    }).pipe(Effect.provide(stepLayer(fresh.home(), world)))
  })

  it("describeInstall covers every case in plain words", () => {
    const s = "systemd user manager"
    expect(describeInstall({ _tag: "Nothing" }, 5, s)).toBe("started blctxd (pid 5) under the systemd user manager")
    expect(describeInstall({ _tag: "Nothing" }, null, s)).toBe("started blctxd under the systemd user manager")
    expect(describeInstall({ _tag: "Answering", pid: 5 }, 5, s)).toBe(
      "blctxd already running (pid 5) under the systemd user manager"
    )
    expect(describeInstall({ _tag: "Stale", pid: null, socket: true }, 6, s)).toBe(
      "started blctxd (pid 6) under the systemd user manager; it replaced a stale socket left by a daemon that is gone"
    )
    expect(describeInstall({ _tag: "Stale", pid: 5, socket: true }, 5, s)).toBe(
      "blctxd already running (pid 5) under the systemd user manager; it did not answer before install, it does now"
    )
    const stopping = "the database blctxd holds was removed from /data/context.db; blctxd is stopping"
    expect(describeInstall({ _tag: "Stale", pid: 5, socket: false, stopping }, 6, s)).toBe(
      `restarted blctxd (pid 6) under the systemd user manager; it replaced pid 5: ${stopping}`
    )
    expect(describeInstall({ _tag: "Stale", pid: null, socket: false, stopping }, 6, s)).toBe(
      `started blctxd (pid 6) under the systemd user manager; ${stopping}`
    )
  })
})

describe("background_service diagnose (doctor)", () => {
  it.effect("reports the supervisor's view and the last error in the daemon's log", () => {
    const world = makeWorld({ pid: 101, answering: true })
    const paths = resolvePaths(pathInputs(fresh.home()))
    Fs.writeFileSync(
      `${paths.stateDir}/blctxd.log`,
      [
        JSON.stringify({ message: "blctxd ready", logLevel: "INFO", timestamp: "2026-03-01T10:00:00Z" }),
        JSON.stringify({
          message: "blctxd refused to start",
          logLevel: "ERROR",
          timestamp: "2026-03-01T10:00:01Z",
          annotations: { reason: "lock held" }
        }),
        JSON.stringify({ message: "blctxd ready", logLevel: "INFO", timestamp: "2026-03-01T10:00:02Z" })
      ].join("\n")
    )
    return Effect.gen(function* () {
      const step: Step = yield* backgroundServiceStep
      const found = yield* diagnoseOf(step, runOf("doctor"))
      expect(found.detail).toBe(
        `supervisor: ${SUPERVISOR}: ${paths.stateDir}/unit, enabled, active, main PID 101 alive; last error in ${paths.stateDir}/blctxd.log: 2026-03-01T10:00:01Z blctxd refused to start {"reason":"lock held"}`
      )
      Fs.rmSync(`${paths.stateDir}/blctxd.log`)
      const noLog = yield* diagnoseOf(step, runOf("doctor"))
      expect(noLog.detail).toContain(`no log at ${paths.stateDir}/blctxd.log`)
    }).pipe(Effect.provide(stepLayer(fresh.home(), world)))
  })

  it("lastLoggedError finds the newest error line, JSON or a stack trace", () => {
    expect(lastLoggedError("")).toEqual(Option.none())
    expect(lastLoggedError(`${JSON.stringify({ message: "x", logLevel: "INFO" })}\n`)).toEqual(Option.none())
    expect(lastLoggedError("TypeError: boom\n    at x\n")).toEqual(Option.some("TypeError: boom"))
    expect(
      lastLoggedError(
        [
          JSON.stringify({ message: "first", logLevel: "ERROR" }),
          JSON.stringify({ message: ["second", "part"], logLevel: "FATAL" })
        ].join("\n")
      )
    ).toEqual(Option.some("second part"))
  })
})
