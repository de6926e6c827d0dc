import { existsSync, lstatSync, readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import type { BlctxClient } from "../src/rpc/client.js"
import {
  checkOf,
  type DaemonHome,
  isAlive,
  makeDaemonHome,
  type Supervisor,
  waitFor,
  writerHeld
} from "./support/daemon-harness.js"
import { builtProgram, installationArgs, runProcess } from "./support/isolated-home.js"

const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
/** The built `blctx/client` entry point (what package.json exports). */
const builtClient = NodePath.join(root, "dist", "src", "rpc", "client.js")

interface SqliteDatabase {
  prepare(sql: string): { all(...params: ReadonlyArray<unknown>): Array<Record<string, unknown>> }
  exec(sql: string): void
  close(): void
}
const Database = createRequire(import.meta.url)("better-sqlite3") as new (
  file: string,
  options?: { readonly readonly?: boolean; readonly timeout?: number }
) => SqliteDatabase

const withClient = async <A>(home: DaemonHome, use: (client: BlctxClient) => Effect.Effect<A, unknown>) => {
  const { connect } = (await import(builtClient)) as typeof import("../src/rpc/client.js")
  return Effect.runPromise(
    Effect.scoped(Effect.flatMap(connect({ socketPath: home.socketPath, timeout: "5 seconds" }), use))
  )
}

const daemonArgs = (home: DaemonHome) => [builtProgram("daemon"), ...installationArgs(home, home.installationId())]

const onlyDaemon = (home: DaemonHome) =>
  waitFor("exactly one daemon", () => {
    const pids = home.daemonPids()
    return pids.length === 1 ? pids[0] : undefined
  })

const installGreen = async (home: DaemonHome) => {
  const install = await home.blctx(["install", "codex", "--step", "service_health", "--json"])
  expect(install.code, install.stdout + install.stderr).toBe(0)
  expect(checkOf(install.stdout, "background_service").status).toBe("passed")
  expect(checkOf(install.stdout, "service_health").status).toBe("passed")
  return install
}

const statusGreen = async (home: DaemonHome) => {
  for (const step of ["background_service", "service_health"]) {
    const status = await home.blctx(["status", "--step", step, "--json"])
    expect(status.code, status.stdout).toBe(0)
    expect(checkOf(status.stdout, step).status).toBe("passed")
  }
}

/** After a crash: fake systemd restarts by itself; the detached supervisor is restarted on demand. */
const restartAfterCrash = async (home: DaemonHome, crashed: number) => {
  if (home.supervisor === "detached") {
    const down = await home.blctx(["status", "--step", "background_service", "--json"])
    expect(down.code).toBe(1)
    expect(checkOf(down.stdout, "background_service").detail).toContain("not running")
    // The CLI restarts the detached daemon on demand when its socket does not answer.
    const ping = await home.blctx(["ping", "--json"])
    expect(ping.code, ping.stderr).toBe(0)
    const answer = JSON.parse(ping.stdout) as { ok: boolean; supervisor: string; daemon: { pid: number } }
    expect(answer.supervisor).toBe("detached")
    expect(answer.daemon.pid).not.toBe(crashed)
  }
  const pid = await waitFor("a restarted daemon", () => {
    const pids = home.daemonPids()
    return pids.length === 1 && pids[0] !== crashed ? pids[0] : undefined
  })
  await waitFor("the restarted daemon to answer", () =>
    withClient(home, (c) => c.Ping()).then(
      (identity) => (identity.pid === pid ? identity : undefined),
      () => undefined
    )
  )
  return pid
}

const jobRow = (home: DaemonHome, jobId: string) => {
  const db = new Database(home.database, { readonly: true })
  try {
    const job = db.prepare("SELECT state, attempts, progress_done FROM jobs WHERE id = ?").all(jobId)[0]
    const steps = db.prepare("SELECT step FROM maintenance_runs WHERE job_id = ? ORDER BY step").all(jobId)
    return { job, steps: steps.map((s) => String(s.step)) }
  } finally {
    db.close()
  }
}

describe.each<Supervisor>(["fake-systemd", "detached"])("blctxd under the %s supervisor", (supervisor) => {
  let home: DaemonHome | undefined
  afterEach(() => {
    home?.dispose()
    home = undefined
  })

  it("installs green, survives kill -9, refuses a second daemon, and uninstalls without leftovers", async () => {
    const h = makeDaemonHome(supervisor)
    home = h
    const install = await installGreen(h)
    expect(checkOf(install.stdout, "background_service").detail).toContain(
      supervisor === "detached" ? "detached supervisor" : "fake systemd"
    )
    await statusGreen(h)

    const socket = lstatSync(h.socketPath)
    expect(socket.isSocket()).toBe(true)
    expect(socket.mode & 0o777).toBe(0o600)

    const first = await onlyDaemon(h)
    const second = await runProcess(process.execPath, daemonArgs(h), { env: h.env })
    expect(second.code).not.toBe(0)
    expect(second.stderr).toContain(`PID ${first}`)
    expect(isAlive(first)).toBe(true)

    process.kill(first, "SIGKILL")
    await waitFor("the killed daemon to be gone", () => (isAlive(first) ? undefined : true))
    const restarted = await restartAfterCrash(h, first)
    expect(restarted).not.toBe(first)
    await waitFor("status green after restart", async () => {
      const status = await h.blctx(["status", "--step", "service_health", "--json"])
      return status.code === 0 ? true : undefined
    })
    await statusGreen(h)

    const unit = h.unitPath()
    expect(readFileSync(unit, "utf8")).toContain(h.installationId())
    const uninstall = await h.blctx(["uninstall", "codex", "--json"])
    expect(checkOf(uninstall.stdout, "background_service").status).toBe("passed")
    expect(h.daemonPids()).toEqual([])
    expect(() => lstatSync(h.socketPath)).toThrow()
    expect(() => lstatSync(unit)).toThrow()

    // --purge also removes what the daemon left: its lock file, pidfile and log.
    const purge = await h.blctx(["uninstall", "codex", "--purge", "--json"])
    expect(checkOf(purge.stdout, "background_service").status).toBe("passed")
    for (const file of [
      NodePath.join(h.xdg.data, "blctx", "writer.lock"),
      NodePath.join(h.stateDir, "blctxd.pid"),
      NodePath.join(h.stateDir, "blctxd.log")
    ]) {
      expect(() => lstatSync(file), file).toThrow()
    }
  })

  it("completes a job killed mid-way exactly once after a restart", async () => {
    const h = makeDaemonHome(supervisor, { heldDaemon: true })
    home = h
    await installGreen(h)
    h.holdJobs({ maintenance_step_ms: 1_500 })
    const submitted = await withClient(h, (c) => c.SubmitJob({ kind: "maintenance" }))
    const jobId = submitted.job.id
    // Wait until the first step committed and the second is holding the writer, then crash.
    await waitFor("one committed step", () =>
      withClient(h, (c) => c.JobStatus({ job_id: jobId })).then((j) => (j.progress_done >= 1 ? j : undefined))
    )
    await waitFor("the next step to hold the writer", () => (writerHeld(h.database) ? true : undefined))
    const crashed = await onlyDaemon(h)
    process.kill(crashed, "SIGKILL")
    await waitFor("the killed daemon to be gone", () => (isAlive(crashed) ? undefined : true))
    const mid = jobRow(h, jobId)
    expect(mid.job?.state).toBe("running")
    expect(mid.steps.length).toBeGreaterThanOrEqual(1)
    expect(mid.steps.length).toBeLessThan(4)

    await restartAfterCrash(h, crashed)
    const done = await waitFor(
      "the job to complete",
      () => withClient(h, (c) => c.JobStatus({ job_id: jobId })).then((j) => (j.state === "completed" ? j : undefined)),
      30_000
    )
    expect(done.progress_done).toBe(4)
    expect(done.attempts).toBe(2)
    const after = jobRow(h, jobId)
    expect(after.steps).toEqual(["optimize", "prune_finished_jobs", "quick_check", "record_stats"])
  })

  it("answers reads from the query workers while a long job holds the writer", async () => {
    const h = makeDaemonHome(supervisor, { heldDaemon: true })
    home = h
    await installGreen(h)
    h.holdJobs({ maintenance_step_ms: 8_000 })
    const submitted = await withClient(h, (c) => c.SubmitJob({ kind: "maintenance" }))
    const jobId = submitted.job.id
    await waitFor("the job to start", () =>
      withClient(h, (c) => c.JobStatus({ job_id: jobId })).then((j) => (j.state === "running" ? j : undefined))
    )
    await waitFor("the job to hold the writer", () => (writerHeld(h.database) ? true : undefined))
    // The writer holds the database's write lock right now: another writer cannot get it...
    const probe = new Database(h.database, { timeout: 0 })
    try {
      expect(() => probe.exec("BEGIN IMMEDIATE")).toThrow(/locked|busy/i)
    } finally {
      probe.close()
    }
    // ...and yet reads are answered, by the query workers on read-only connections.
    const during = await withClient(h, (c) => c.JobStatus({ job_id: jobId }))
    expect(during.state).toBe("running")
    expect(during.progress_done).toBe(0)
    const identity = await withClient(h, (c) => c.Ping())
    expect(identity.installation_id).toBe(h.installationId())
    // The first step has not committed yet: the read was not waiting behind the writer.
    expect(jobRow(h, jobId).steps).toEqual([])

    const cancelled = await withClient(h, (c) => c.CancelJobs({ job_ids: [jobId] }))
    expect(cancelled.cancelled).toEqual([jobId])
    const final = await withClient(h, (c) => c.JobStatus({ job_id: jobId }))
    expect(final.state).toBe("cancelled")
    expect(jobRow(h, jobId).steps).toEqual([])
  })
})

describe("the detached supervisor with concurrent commands", () => {
  let home: DaemonHome | undefined
  afterEach(() => {
    home?.dispose()
    home = undefined
  })

  it("ten commands started together after a kill -9 all succeed, served by one daemon that none of them stopped", async () => {
    const h = makeDaemonHome("detached")
    home = h
    await installGreen(h)
    const crashed = await onlyDaemon(h)
    process.kill(crashed, "SIGKILL")
    await waitFor("the killed daemon to be gone", () => (isAlive(crashed) ? undefined : true))

    const pings = await Promise.all(Array.from({ length: 10 }, () => h.blctx(["ping", "--json"])))
    for (const ping of pings) expect(ping.code, ping.stdout + ping.stderr).toBe(0)
    const served = new Set(pings.map((p) => (JSON.parse(p.stdout) as { daemon: { pid: number } }).daemon.pid))
    // One starter: every command was answered by the same new daemon, and it is still running.
    expect(served.size).toBe(1)
    const [pid] = [...served]
    expect(pid).not.toBe(crashed)
    expect(h.daemonPids()).toEqual([pid])
  })

  it("restarts blctxd from the installation's own command, never from a launch record someone edited", async () => {
    const h = makeDaemonHome("detached")
    home = h
    await installGreen(h)
    const marker = NodePath.join(h.home, "launch-record-was-executed")
    const record = NodePath.join(h.stateDir, "blctxd.launch.json")
    writeFileSync(
      record,
      JSON.stringify({ supervisor: "detached", command: ["/bin/sh", "-c", `touch ${marker}; sleep 60`] }),
      { mode: 0o600 }
    )
    const crashed = await onlyDaemon(h)
    process.kill(crashed, "SIGKILL")
    await waitFor("the killed daemon to be gone", () => (isAlive(crashed) ? undefined : true))

    const ping = await h.blctx(["ping", "--json"])
    expect(ping.code, ping.stdout + ping.stderr).toBe(0)
    const answer = JSON.parse(ping.stdout) as { daemon: { pid: number; argv: Array<string> } }
    expect(answer.daemon.argv).toContain(builtProgram("daemon"))
    expect(existsSync(marker)).toBe(false)
    // The edited record is reported, not trusted.
    const status = await h.blctx(["status", "--step", "background_service", "--json"])
    expect(checkOf(status.stdout, "background_service").status).toBe("failed")
    expect(checkOf(status.stdout, "background_service").detail).toContain("differs")
  })
})
