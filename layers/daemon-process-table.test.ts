import { spawn } from "node:child_process"
import { Command } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Option, Ref, TestClock } from "effect"
import { InstallationId } from "../src/domain/installation-id.js"
import { resolvePaths } from "../src/paths/paths.js"
import { makeServiceSpec } from "../src/service/service-spec.js"
import { isAlive, isDaemonOf, pollUntil, runCommand, stopProcess } from "./daemon-process-table.js"

describe("pollUntil", () => {
  it.effect("checks every interval until a value comes, on Effect time", () =>
    Effect.gen(function* () {
      const checks = yield* Ref.make(0)
      const check = Ref.updateAndGet(checks, (n) => n + 1).pipe(
        Effect.map((n) => (n === 3 ? Option.some("ready") : Option.none()))
      )
      const fiber = yield* Effect.fork(pollUntil(check, "100 millis", "10 seconds"))
      yield* TestClock.adjust("200 millis")
      expect(yield* Fiber.join(fiber)).toEqual(Option.some("ready"))
      expect(yield* Ref.get(checks)).toBe(3)
    })
  )

  it.effect("gives none once the limit has passed, without another check", () =>
    Effect.gen(function* () {
      const checks = yield* Ref.make(0)
      const fiber = yield* Effect.fork(
        pollUntil(
          Effect.as(
            Ref.update(checks, (n) => n + 1),
            Option.none()
          ),
          "1 second",
          "5 seconds"
        )
      )
      yield* TestClock.adjust("1 minute")
      expect(yield* Fiber.join(fiber)).toEqual(Option.none())
      // At 0, 1, 2, 3, 4 and 5 s: the limit only decides whether another check starts.
      expect(yield* Ref.get(checks)).toBeLessThanOrEqual(6)
      expect(yield* Ref.get(checks)).toBeGreaterThanOrEqual(5)
    })
  )

  it.effect("waits without a bound when the limit is infinite", () =>
    Effect.gen(function* () {
      const checks = yield* Ref.make(0)
      const check = Ref.updateAndGet(checks, (n) => n + 1).pipe(
        Effect.map((n) => (n === 100 ? Option.some(n) : Option.none()))
      )
      const fiber = yield* Effect.fork(pollUntil(check, "1 minute", Duration.infinity))
      yield* TestClock.adjust("2 hours")
      expect(yield* Fiber.join(fiber)).toEqual(Option.some(100))
    })
  )

  it.effect("passes a check's failure through", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(pollUntil(Effect.fail("broken" as const), "1 second", "5 seconds"))
      expect(error).toBe("broken")
    })
  )
})

describe("runCommand (through @effect/platform Command)", () => {
  it.live("collects stdout, stderr and the exit status", () =>
    Effect.gen(function* () {
      const ok = yield* runCommand(Command.make("sh", "-c", "echo out; echo err >&2"), "10 seconds")
      expect(ok).toEqual({ code: 0, stdout: "out\n", stderr: "err\n" })
      const failed = yield* runCommand(Command.make("sh", "-c", "echo nope >&2; exit 3"), "10 seconds")
      expect(failed).toEqual({ code: 3, stdout: "", stderr: "nope\n" })
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.live("reports a command that cannot start, or outlives its bound, as status 1 with the reason", () =>
    Effect.gen(function* () {
      const missing = yield* runCommand(Command.make("/nonexistent/systemctl", "--user"), "10 seconds")
      expect(missing.code).toBe(1)
      expect(missing.stderr).toContain("ENOENT")
      const started = Date.now()
      const slow = yield* runCommand(Command.make("sleep", "30"), "300 millis")
      expect(slow).toEqual({ code: 1, stdout: "", stderr: "no answer within 300ms" })
      expect(Date.now() - started).toBeLessThan(5_000)
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.live("reports a command killed by a signal as status 1", () =>
    Effect.gen(function* () {
      const killed = yield* runCommand(Command.make("sh", "-c", "kill -9 $$"), "10 seconds")
      expect(killed.code).toBe(1)
      expect(killed.stderr).toContain("SIGKILL")
    }).pipe(Effect.provide(NodeContext.layer))
  )
})

describe("stopProcess", () => {
  it.live("SIGTERMs a process and returns once it is gone", () =>
    Effect.gen(function* () {
      const child = spawn("sleep", ["30"], { stdio: "ignore" })
      const pid = child.pid ?? 0
      // Reap it as soon as it exits, so /proc no longer lists it.
      child.on("exit", () => undefined)
      yield* stopProcess(pid, "5 seconds")
      expect(isAlive(pid)).toBe(false)
    })
  )

  it.live("SIGKILLs a process that ignores SIGTERM once the grace has passed", () =>
    Effect.gen(function* () {
      const child = spawn("sh", ["-c", "trap '' TERM; echo ready; while :; do sleep 0.05; done"], {
        stdio: ["ignore", "pipe", "ignore"]
      })
      yield* Effect.promise(() => new Promise((ready) => child.stdout?.once("data", ready)))
      const pid = child.pid ?? 0
      const started = Date.now()
      yield* stopProcess(pid, "300 millis")
      expect(isAlive(pid)).toBe(false)
      expect(Date.now() - started).toBeGreaterThanOrEqual(250)
    })
  )
})

describe("isDaemonOf", () => {
  const spec = makeServiceSpec({
    installationId: InstallationId.make("6f1c8f5e-3b1a-4c2d-9e7f-0a1b2c3d4e5f"),
    paths: resolvePaths({ home: "/home/someone" }),
    node: "/usr/bin/node",
    daemon: "/opt/blctx/dist/programs/daemon.js"
  })

  it("knows the daemon by its entry and installation, node flags or not", () => {
    expect(isDaemonOf(spec, spec.command)).toBe(true)
    expect(spec.command[1]).toBe("--optimize-for-size")
    expect(
      isDaemonOf(
        spec,
        spec.command.filter((a) => a !== "--optimize-for-size")
      )
    ).toBe(true)
    const moved = spec.command.map((a) => (a === spec.daemonEntry ? "/old/build/dist/programs/daemon.js" : a))
    expect(isDaemonOf(spec, moved)).toBe(true)
  })

  it("refuses another installation, another program, or the id before the entry", () => {
    const other = spec.command.map((a) => (a === spec.installationId ? "00000000-0000-4000-8000-000000000000" : a))
    expect(isDaemonOf(spec, other)).toBe(false)
    const notDaemon = spec.command.map((a) => (a === spec.daemonEntry ? "/opt/blctx/dist/programs/cli.js" : a))
    expect(isDaemonOf(spec, notDaemon)).toBe(false)
    const idFirst = ["/usr/bin/node", "--installation-id", spec.installationId, spec.daemonEntry]
    expect(isDaemonOf(spec, idFirst)).toBe(false)
  })
})
