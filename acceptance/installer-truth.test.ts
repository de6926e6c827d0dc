import * as Fs from "node:fs"
import { createRequire } from "node:module"
import { afterEach, describe, expect, it } from "vitest"
import { type DaemonHome, makeDaemonHome, waitFor } from "./support/daemon-harness.js"
import { check, placeSession, report } from "./support/installer-report.js"
import { type ModelServer, modelData, serveTinyModel, useTinyModel } from "./support/model-server.js"

/**
 * What the installer says must be what happened: reruns, the index after history_index, doctor
 * against status, install against status for the optional hooks, and uninstall --purge.
 */

const Database = createRequire(import.meta.url)("better-sqlite3") as new (
  file: string,
  options?: { readonly readonly?: boolean }
) => { prepare(sql: string): { all(): Array<Record<string, unknown>> }; close(): void }

let home: DaemonHome | undefined
let server: ModelServer | undefined
afterEach(async () => {
  home?.dispose()
  home = undefined
  await server?.close()
  server = undefined
})

const one = (h: DaemonHome, sql: string) => {
  const db = new Database(h.database, { readonly: true })
  try {
    return Number(db.prepare(sql).all()[0]?.n ?? 0)
  } finally {
    db.close()
  }
}

const data = modelData()

describe("background_service on a rerun under (fake) systemd", () => {
  it("keeps the daemon of an unchanged unit and says so; a changed unit restarts it and says which it replaced", async () => {
    const h = makeDaemonHome("fake-systemd")
    home = h
    const first = await report(h, ["install", "codex", "--step", "background_service"])
    const pid = /^started blctxd \(pid (\d+)\) under the fake systemd user manager \(tests\)$/.exec(
      check(first, "background_service").detail
    )?.[1]
    expect(pid, check(first, "background_service").detail).toBeDefined()
    const again = await report(h, ["install", "codex", "--step", "background_service"])
    expect(check(again, "background_service").detail).toBe(
      `blctxd already running (pid ${pid}) under the fake systemd user manager (tests)`
    )
    expect(h.daemonPids()).toEqual([Number(pid)])

    // A unit that differs from what this blctx writes (edited, or from another build) is replaced.
    Fs.appendFileSync(h.unitPath(), "# edited\n")
    const changed = await report(h, ["install", "codex", "--step", "background_service"])
    const detail = check(changed, "background_service").detail
    const replaced =
      /^restarted blctxd \(pid (\d+)\) under the fake systemd user manager \(tests\); it replaced pid (\d+)$/.exec(
        detail
      )
    expect(replaced, detail).not.toBeNull()
    expect(replaced?.[2]).toBe(pid)
    const only = await waitFor("only the new daemon to run", () => {
      const pids = h.daemonPids()
      return pids.length === 1 ? pids : undefined
    })
    expect(only).toEqual([Number(replaced?.[1])])
  })
})

describe.skipIf(data === undefined)("the installer says what happened", () => {
  it("install, rerun, status, doctor and uninstall --purge each tell the truth", async () => {
    const h = makeDaemonHome("detached")
    home = h
    server = await serveTinyModel(data as string)
    useTinyModel(h, data as string, server)
    placeSession(h, "session-1.jsonl")
    placeSession(h, "session-2.jsonl")

    // A full install without a TTY and without a hooks flag.
    const installed = await report(h, ["install", "codex"])
    const started = check(installed, "background_service")
    expect(started.status).toBe("passed")
    const pid = /^started blctxd \(pid (\d+)\) under the detached supervisor/.exec(started.detail)?.[1]
    expect(pid, started.detail).toBeDefined()
    expect(h.daemonPids()).toEqual([Number(pid)])
    // The daemon runs with the service's environment (fewer malloc arenas: see DAEMON_ENVIRONMENT).
    const environ = Fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")
    expect(environ).toContain("MALLOC_ARENA_MAX=2")
    expect(environ).toContain("MALLOC_MMAP_THRESHOLD_=65536")

    // service_health runs right after history_index: its index line is what the database holds.
    expect(check(installed, "history_index").status).toBe("passed")
    const health = check(installed, "service_health")
    expect(health.status).toBe("passed")
    const messages = one(h, "SELECT count(*) AS n FROM messages")
    const sessions = one(h, "SELECT count(*) AS n FROM sessions")
    expect(messages).toBeGreaterThan(0)
    expect(health.detail).toMatch(/^blctxd answered in \d+ ms \(pid \d+, version /)
    expect(health.detail).toContain(`index: ${messages} messages in ${sessions} sessions`)
    expect(health.detail).not.toContain("index empty")

    // install and status agree on the optional hooks.
    const status = await report(h, ["status"])
    expect(check(status, "codex_hooks")).toEqual(check(installed, "codex_hooks"))

    // A rerun keeps the same daemon and says so.
    const rerun = await report(h, ["install", "codex", "--step", "service_health"])
    expect(check(rerun, "background_service").detail).toBe(
      `blctxd already running (pid ${pid}) under the detached supervisor (no systemd user manager)`
    )
    expect(h.daemonPids()).toEqual([Number(pid)])

    // doctor looks deeper than status for every step, or says there is nothing deeper.
    const doctor = await report(h, ["doctor"])
    for (const c of status.checks) {
      if (c.status === "blocked") continue
      expect(check(doctor, c.id).detail, c.id).not.toBe(c.detail)
    }
    expect(check(doctor, "data_directory").detail).toContain("deeper check: quick_check ok, journal mode wal")
    expect(check(doctor, "service_health").detail).toContain("deeper check: 5 Pings: min ")
    expect(check(doctor, "codex_mcp").detail).toContain("; deeper check: ")
    for (const c of doctor.checks) if (c.status === "failed") expect(c.detail.trim(), c.id).not.toBe("")

    // uninstall --purge: nothing suggests a flag uninstall does not take, and the history goes.
    const purged = await report(h, ["uninstall", "codex", "--purge"])
    expect(check(purged, "history_index").detail).toMatch(/which data_directory removes \(--purge\)$/)
    expect(check(purged, "history_index").detail).not.toContain("kept")
    expect(check(purged, "codex_hooks").status).toBe("passed")
    for (const c of purged.checks) expect(c.remediation ?? "", c.id).not.toContain("--no-hooks")
    expect(Fs.existsSync(h.database)).toBe(false)
  })
})
