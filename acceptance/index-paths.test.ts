import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { type DaemonHome, makeDaemonHome } from "./support/daemon-harness.js"
import { type IsolatedHome, makeIsolatedHome } from "./support/isolated-home.js"

interface Refusal {
  readonly error: {
    readonly _tag: string
    readonly message: string
    readonly paths: ReadonlyArray<{ readonly path: string; readonly problem: string }>
  }
  readonly exit_code: number
}

let home: IsolatedHome | undefined
afterEach(() => {
  home?.dispose()
  home = undefined
})

/** A real transcript, a missing one, a link to the real one and a directory, in the home. */
const placePaths = (h: IsolatedHome) => {
  const dir = NodePath.join(h.home, "given")
  Fs.mkdirSync(NodePath.join(dir, "folder"), { recursive: true })
  const real = NodePath.join(dir, "real.jsonl")
  Fs.writeFileSync(real, `${JSON.stringify({ timestamp: "2026-02-01T00:00:00Z", type: "session_meta" })}\n`)
  const link = NodePath.join(dir, "link.jsonl")
  Fs.symlinkSync(real, link)
  return { real, missing: NodePath.join(dir, "missing.jsonl"), link, folder: NodePath.join(dir, "folder") }
}

describe("blctx index of paths that are not transcript files", () => {
  it("refuses a path that does not exist, naming it, before asking the daemon anything", async () => {
    // Not installed: had the command asked the daemon first, the error would be that it is unavailable.
    const h = makeIsolatedHome()
    home = h
    const result = await h.blctx(["index", "/nonexistent.jsonl", "--wait"])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("/nonexistent.jsonl does not exist")
    const refusal = JSON.parse(result.stdout) as Refusal
    expect(refusal.exit_code).toBe(1)
    expect(refusal.error._tag).toBe("UnindexablePaths")
    expect(refusal.error.paths).toEqual([{ path: "/nonexistent.jsonl", problem: "does not exist" }])
    expect(Fs.existsSync(NodePath.join(h.xdg.state, "blctx"))).toBe(false)

    const json = await h.blctx(["--json", "index", "/nonexistent.jsonl"])
    expect(json.code).toBe(1)
    expect((JSON.parse(json.stdout) as Refusal).error.message).toContain("/nonexistent.jsonl")
  })

  it("names every refused path (missing, symbolic link, directory) and not the good one", async () => {
    const h = makeIsolatedHome()
    home = h
    const p = placePaths(h)
    const result = await h.blctx(["index", p.real, p.missing, p.link, p.folder, "--json"])
    expect(result.code).toBe(1)
    const refusal = JSON.parse(result.stdout) as Refusal
    expect(refusal.error.paths.map((r) => r.path)).toEqual([p.missing, p.link, p.folder])
    expect(refusal.error.paths.map((r) => r.problem)).toEqual([
      "does not exist",
      expect.stringContaining("symbolic link"),
      expect.stringContaining("directory")
    ])
    for (const path of [p.missing, p.link, p.folder]) expect(result.stderr).toContain(path)
    expect(result.stderr).not.toContain(`${p.real} `)
  })

  it("with the daemon running, submits nothing when one path of several is refused", async () => {
    const h: DaemonHome = makeDaemonHome("detached")
    home = h
    const install = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
    expect(install.code, install.stdout + install.stderr).toBe(0)
    const p = placePaths(h)

    const refused = await h.blctx(["index", p.real, p.missing, "--wait"])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain(p.missing)

    const status = await h.blctx(["index-status"])
    expect(status.code, status.stderr).toBe(0)
    const jobs = (JSON.parse(status.stdout) as { recent_jobs: ReadonlyArray<{ kind: string }> }).recent_jobs
    expect(jobs.filter((j) => j.kind === "import")).toEqual([])

    // The good path alone is indexed as before.
    const accepted = await h.blctx(["index", p.real, "--wait"])
    expect(accepted.code, accepted.stderr).toBe(0)
    expect((JSON.parse(accepted.stdout) as { job: { kind: string } }).job.kind).toBe("import")
  })
})
