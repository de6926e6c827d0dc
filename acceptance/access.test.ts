import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { type DaemonHome, makeDaemonHome } from "./support/daemon-harness.js"

// Another local user: it may walk the person's HOME where their own modes allow (as a default
// umask does), but can neither connect to blctxd's socket nor read or list anything blctx owns.
// It needs root to act as another uid (setpriv), so it runs only as root and is skipped by name
// otherwise. blctxd listens on no TCP port.

const OTHER_UID = 61_234
const asRoot = process.getuid?.() === 0

let home: DaemonHome | undefined
afterEach(() => {
  home?.dispose()
  home = undefined
})

/** Every path under `dir`, `dir` included, as root sees them. */
const walk = (dir: string): Array<string> => {
  const out = [dir]
  for (const entry of Fs.readdirSync(dir, { withFileTypes: true })) {
    const path = NodePath.join(dir, entry.name)
    if (entry.isDirectory()) out.push(...walk(path))
    else out.push(path)
  }
  return out
}

/** What the other user gets trying `path`: "ok" when it could, else the error code. */
const tryAsOther = (path: string): string => {
  const stat = Fs.lstatSync(path)
  const probe = stat.isSocket()
    ? `const s = require("node:net").connect(process.argv[1]); s.on("connect", () => { console.log("ok"); process.exit(0) }); s.on("error", (e) => { console.log(e.code); process.exit(0) })`
    : stat.isDirectory()
      ? `try { require("node:fs").readdirSync(process.argv[1]); console.log("ok") } catch (e) { console.log(e.code) }`
      : `try { require("node:fs").readFileSync(process.argv[1]); console.log("ok") } catch (e) { console.log(e.code) }`
  const result = spawnSync(
    "setpriv",
    [`--reuid=${OTHER_UID}`, `--regid=${OTHER_UID}`, "--clear-groups", process.execPath, "-e", probe, path],
    { encoding: "utf8", timeout: 30_000 }
  )
  expect(result.status, result.stderr).toBe(0)
  return result.stdout.trim()
}

/** Inodes of the TCP sockets in LISTEN state on this machine. */
const tcpListeners = (): Set<string> => {
  const inodes = new Set<string>()
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    if (!Fs.existsSync(table)) continue
    for (const row of Fs.readFileSync(table, "utf8").split("\n").slice(1)) {
      const cells = row.trim().split(/\s+/)
      if (cells[3] === "0A" && cells[9] !== undefined) inodes.add(cells[9])
    }
  }
  return inodes
}

describe("another local user", () => {
  it.runIf(asRoot)(
    "cannot connect to the daemon's socket, nor read or list anything blctx keeps in its data, state, config and cache directories (runs as root only)",
    async () => {
      const h = makeDaemonHome("detached")
      home = h
      const install = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
      expect(install.code, install.stdout + install.stderr).toBe(0)
      const search = await h.blctx(["search", "anything", "--json"])
      expect(search.code, search.stderr).toBe(0)

      // The HOME and the XDG roots open to others, as a default umask leaves them.
      const roots = [h.xdg.data, h.xdg.config, h.xdg.cache, h.xdg.state]
      for (let dir = h.xdg.data; dir.startsWith(h.home); dir = NodePath.dirname(dir)) Fs.chmodSync(dir, 0o755)
      for (const root of roots) Fs.chmodSync(root, 0o755)

      const owned = roots.flatMap((root) => {
        const mine = NodePath.join(root, "blctx")
        return Fs.existsSync(mine) ? walk(mine) : []
      })
      expect(owned).toContain(h.database)
      expect(owned).toContain(h.socketPath)
      const outcomes = owned.map((path) => ({ path, outcome: tryAsOther(path) }))
      const allowed = outcomes.filter((o) => o.outcome === "ok")
      console.log(
        `access: ${outcomes.length} paths blctx owns tried as uid ${OTHER_UID}; ${outcomes.length - allowed.length} refused (${[...new Set(outcomes.map((o) => o.outcome))].join(", ")}), ${allowed.length} allowed`
      )
      expect(allowed).toEqual([])

      // No TCP listener belongs to the daemon.
      const [daemon] = h.daemonPids()
      const fds = Fs.readdirSync(`/proc/${daemon}/fd`).flatMap((fd) => {
        try {
          return [Fs.readlinkSync(`/proc/${daemon}/fd/${fd}`)]
        } catch {
          return []
        }
      })
      const sockets = fds.flatMap((l) => /^socket:\[(\d+)\]$/.exec(l)?.[1] ?? [])
      expect(sockets.length).toBeGreaterThan(0)
      const listening = tcpListeners()
      expect(sockets.filter((inode) => listening.has(inode))).toEqual([])
    },
    300_000
  )
})
