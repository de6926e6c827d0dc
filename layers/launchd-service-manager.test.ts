import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Schedule } from "effect"
import type { InstallationId } from "../src/domain/installation-id.js"
import { Launchctl } from "../src/service/launchctl.js"
import { launchdLabel, renderPlist } from "../src/service/launchd-plist.js"
import { ServiceManager } from "../src/service/service-manager.js"
import type { ServiceSpec } from "../src/service/service-spec.js"
import { makeFakeLaunchctl } from "../testing/fake-launchctl.js"
import { isAlive, socketAnswers } from "./daemon-process-table.js"
import { makeLaunchdServiceManager } from "./launchd-service-manager.js"

/** A stand-in daemon: serves its socket until SIGTERM, then removes it and exits 0. */
const STUB = `
const net = require("node:net")
const fs = require("node:fs")
const socket = process.argv[2]
try { fs.rmSync(socket) } catch {}
const server = net.createServer((c) => c.end()).listen(socket)
process.on("SIGTERM", () => server.close(() => process.exit(0)))
`

/** Waits (a bounded poll) until `check` finds something. */
const eventually = <A, E>(check: Effect.Effect<Option.Option<A>, E>) =>
  check.pipe(
    Effect.flatMap((found) => (Option.isSome(found) ? Effect.succeed(found.value) : Effect.fail("not yet" as const))),
    Effect.retry(Schedule.spaced("50 millis")),
    Effect.timeout("60 seconds")
  )

const setup = Effect.acquireRelease(
  Effect.sync(() => {
    const dir = Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-launchd-"))
    const stateDir = NodePath.join(dir, "state")
    Fs.mkdirSync(stateDir)
    const stub = NodePath.join(dir, "stub-daemon.cjs")
    Fs.writeFileSync(stub, STUB)
    const installationId = "00000000-0000-4000-8000-000000000003" as InstallationId
    const socketPath = NodePath.join(stateDir, "blctxd.sock")
    const spec: ServiceSpec = {
      installationId,
      name: `blctxd-${installationId}`,
      command: [process.execPath, stub, socketPath],
      environment: { MALLOC_ARENA_MAX: "2" },
      daemonEntry: stub,
      socketPath,
      stateDir,
      configDir: NodePath.join(dir, "config"),
      pidFile: NodePath.join(stateDir, "blctxd.pid"),
      logFile: NodePath.join(stateDir, "blctxd.log")
    }
    const fake = makeFakeLaunchctl()
    const agents = NodePath.join(dir, "Library", "LaunchAgents")
    const layer = makeLaunchdServiceManager(agents).pipe(Layer.provide(fake.layer))
    return { dir, spec, fake, layer, plist: NodePath.join(agents, `${launchdLabel(spec)}.plist`) }
  }),
  ({ dir, fake }) => Effect.andThen(fake.shutdown, () => Fs.rmSync(dir, { recursive: true, force: true }))
)

describe("the launchd service manager, against a fake launchctl", () => {
  it.scopedLive("install writes a private plist, bootstraps it into gui/<uid> and returns once the daemon serves", () =>
    Effect.gen(function* () {
      const { spec, fake, layer, plist } = yield* setup
      yield* Effect.gen(function* () {
        const manager = yield* ServiceManager
        expect(manager.kind).toBe("launchd")
        yield* manager.install(spec)
        expect(Fs.readFileSync(plist, "utf8")).toBe(renderPlist(spec))
        expect(Fs.statSync(plist).mode & 0o777).toBe(0o600)
        expect(fake.calls).toEqual([
          `launchctl print gui/501/${launchdLabel(spec)}`,
          `launchctl bootstrap gui/501 ${plist}`
        ])
        expect(yield* socketAnswers(spec.socketPath)).toBe(true)
        const status = yield* manager.status(spec)
        expect(status).toMatchObject({ unitPath: plist, enabled: true, active: true, expectedUnit: renderPlist(spec) })
        expect(Option.getOrThrow(status.commandLine)).toEqual(spec.command)
        const pid = Option.getOrThrow(status.mainPid)

        // The same plist again: the running daemon stays (kickstart without -k starts only a stopped one).
        fake.calls.length = 0
        yield* manager.install(spec)
        expect(fake.calls).toEqual([
          `launchctl print gui/501/${launchdLabel(spec)}`,
          `launchctl kickstart gui/501/${launchdLabel(spec)}`
        ])
        expect(Option.getOrThrow((yield* manager.status(spec)).mainPid)).toBe(pid)

        // A changed command takes effect: unloaded and loaded again, with a new process.
        const changed = { ...spec, command: [...spec.command, "--changed"] }
        fake.calls.length = 0
        yield* manager.install(changed)
        expect(fake.calls).toEqual([
          `launchctl print gui/501/${launchdLabel(spec)}`,
          `launchctl bootout gui/501/${launchdLabel(spec)}`,
          `launchctl bootstrap gui/501 ${plist}`
        ])
        const after = yield* manager.status(changed)
        expect(Option.getOrThrow(after.mainPid)).not.toBe(pid)
        expect(isAlive(pid)).toBe(false)

        // Uninstall leaves no agent, plist, process or socket.
        const newPid = Option.getOrThrow(after.mainPid)
        yield* manager.uninstall(changed)
        expect(fake.agents.size).toBe(0)
        expect(Fs.existsSync(plist)).toBe(false)
        expect(Fs.existsSync(spec.socketPath)).toBe(false)
        expect(isAlive(newPid)).toBe(false)
        expect((yield* manager.status(changed)).enabled).toBe(false)
      }).pipe(Effect.provide(layer))
    })
  )

  it.scopedLive("ensureRunning brings back a daemon that died, and launchd restarts one that failed", () =>
    Effect.gen(function* () {
      const { spec, fake, layer } = yield* setup
      yield* Effect.gen(function* () {
        const manager = yield* ServiceManager
        yield* manager.install(spec)
        const first = Option.getOrThrow((yield* manager.status(spec)).mainPid)
        // A failing exit (KeepAlive.SuccessfulExit = false): launchd starts it again by itself.
        process.kill(first, "SIGKILL")
        const restarted = yield* eventually(
          Effect.map(manager.status(spec), (s) => Option.filter(s.mainPid, (pid) => pid !== first))
        )
        expect(restarted).not.toBe(first)
        // It serves again; ensureRunning finds it serving and asks launchd nothing.
        yield* eventually(Effect.map(socketAnswers(spec.socketPath), (ok) => (ok ? Option.some(ok) : Option.none())))
        fake.calls.length = 0
        yield* manager.ensureRunning(spec)
        expect(fake.calls).toEqual([])
        // Unloaded by hand (launchctl bootout), then wanted again: bootstrapped anew from its plist.
        expect(yield* (yield* Launchctl).bootout(launchdLabel(spec))).toBe(true)
        expect(yield* socketAnswers(spec.socketPath)).toBe(false)
        yield* manager.ensureRunning(spec)
        expect(fake.calls.at(-1)).toMatch(/^launchctl bootstrap gui\/501 /)
        expect(yield* socketAnswers(spec.socketPath)).toBe(true)
      }).pipe(Effect.provide(Layer.merge(layer, fake.layer)))
    })
  )

  it.scopedLive("a plist launchd would refuse fails the install with launchctl's words and a remedy", () =>
    Effect.gen(function* () {
      const { spec, layer, plist } = yield* setup
      const broken = { ...spec, name: "" }
      yield* Effect.gen(function* () {
        const manager = yield* ServiceManager
        const error = yield* Effect.flip(manager.install({ ...broken, command: [] }))
        expect(error.detail).toContain("launchctl bootstrap gui/501")
        expect(error.detail).toContain("ProgramArguments")
        expect(error.remediation).toContain("BLCTX_SERVICE_MANAGER=detached")
        expect(Fs.existsSync(plist)).toBe(false)
      }).pipe(Effect.provide(layer))
    })
  )
})
