import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { writeSyntheticHistory } from "../bench/synthetic-history.js"
import { checkOf, type DaemonHome, isAlive, makeDaemonHome } from "./support/daemon-harness.js"

const isRoot = typeof process.getuid === "function" && process.getuid() === 0

/** Mounts a tmpfs at `dir` (created first); false when this machine does not let us. */
const mountTmpfs = (dir: string, options: string): boolean => {
  Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", options, "none", dir], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

const mounted: Array<string> = []
let home: DaemonHome | undefined
afterEach(() => {
  // Daemons first (they hold files on the mount), then the mounts, then the home.
  const h = home
  home = undefined
  for (const pid of h?.processes() ?? []) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // already gone
    }
  }
  for (const dir of mounted.splice(0).reverse()) {
    try {
      execFileSync("umount", ["-l", dir], { stdio: "ignore" })
    } catch {
      // not mounted any more
    }
  }
  h?.dispose()
})

/** A detached-daemon home whose XDG_DATA_HOME is a fresh tmpfs; undefined when it cannot be mounted. */
const homeOnTmpfs = (options: string): DaemonHome | undefined => {
  const h = makeDaemonHome("detached")
  home = h
  if (!mountTmpfs(h.xdg.data, `${options},mode=0700`)) return undefined
  mounted.push(h.xdg.data)
  return h
}

const oneJsonDocument = (stdout: string) => {
  // JSON.parse refuses anything after the document, so a log line on stdout fails here.
  return JSON.parse(stdout) as { job?: { state: string; error: string | null }; error?: { message?: string } }
}

describe("a full disk and a read-only data folder", () => {
  it.runIf(isRoot)(
    "a full disk fails the import naming the database, and the daemon keeps answering (root: tmpfs)",
    async (ctx) => {
      const h = homeOnTmpfs("size=3m")
      if (h === undefined) return ctx.skip()
      const install = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
      expect(install.code, install.stdout + install.stderr).toBe(0)

      // Transcripts outside the small filesystem, several times its size.
      const sources = NodePath.join(h.home, "sources")
      const files = writeSyntheticHistory(sources, 12, 400)
      const bytes = files.reduce((n, f) => n + Fs.statSync(f).size, 0)
      expect(bytes).toBeGreaterThan(8 * 1024 * 1024)

      const run = await h.blctx(["index", ...files, "--wait", "--json"])
      const report = oneJsonDocument(run.stdout)
      expect(report.job?.state, run.stdout).not.toBe("completed")
      const said = report.job?.error ?? report.error?.message ?? ""
      expect(said, run.stdout + run.stderr).toContain("disk is full")
      expect(said).toContain(h.database)
      expect(said).toMatch(/free on that filesystem/)
      expect(said).toContain("then rerun blctx index")

      expect(h.daemonPids().filter(isAlive).length).toBeGreaterThan(0)
      const ping = await h.blctx(["ping", "--json"])
      expect(ping.code, ping.stdout + ping.stderr).toBe(0)
      oneJsonDocument(ping.stdout)
    }
  )

  it.runIf(isRoot)(
    "a read-only data folder is reported as not writable, not as an unreadable database (root: tmpfs)",
    async (ctx) => {
      const h = homeOnTmpfs("size=16m")
      if (h === undefined) return ctx.skip()
      const install = await h.blctx(["install", "codex", "--step", "data_directory", "--json"])
      expect(install.code, install.stdout + install.stderr).toBe(0)
      try {
        execFileSync("mount", ["-o", "remount,ro", h.xdg.data], { stdio: "ignore" })
      } catch {
        return ctx.skip()
      }

      for (const command of ["status", "doctor"]) {
        const run = await h.blctx([command, "--json"])
        expect(run.code, `${command}: ${run.stdout}${run.stderr}`).not.toBe(0)
        const check = checkOf(run.stdout, "data_directory")
        expect(check.status, run.stdout).toBe("failed")
        expect(run.stdout).not.toContain("not a readable SQLite database")
        expect(check.detail, run.stdout).toContain(NodePath.join(h.xdg.data, "blctx"))
        expect(check.detail, run.stdout).toContain("not writable")
        expect(check.detail, run.stdout).toContain("read-only filesystem")
        expect(check.remediation, run.stdout).toMatch(/remount|read-write/)
      }
    }
  )
})
