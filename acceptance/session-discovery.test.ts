import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { type IsolatedHome, makeIsolatedHome, parseJson } from "./support/isolated-home.js"

let home: IsolatedHome
beforeEach(() => {
  home = makeIsolatedHome()
})
afterEach(() => home.dispose())

interface ReportJson {
  exit_code: number
  checks: Array<{ id: string; status: string; detail: string; remediation?: string }>
}

const session = (relative: string, minutesAgo: number) => {
  const path = NodePath.join(home.codexHome, relative)
  Fs.mkdirSync(NodePath.dirname(path), { recursive: true })
  Fs.writeFileSync(path, '{"timestamp":"2026-03-10T12:00:00.000Z","type":"session_meta","payload":{"id":"s"}}\n')
  const when = new Date(Date.parse("2026-03-10T12:00:00Z") - minutesAgo * 60_000)
  Fs.utimesSync(path, when, when)
  return path
}

const check = (report: ReportJson) => {
  const c = report.checks.find((x) => x.id === "session_discovery")
  if (c === undefined) throw new Error("no session_discovery check in the report")
  return c
}

describe("blctx install codex --step session_discovery", () => {
  it("reports the count and the five newest paths from sessions and archived sessions", async () => {
    const active = [5, 10, 20, 30, 40, 50].map((m, i) => session(`sessions/2026/03/0${i + 1}/rollout-${i}.jsonl`, m))
    const archived = [
      session("archived_sessions/rollout-old.jsonl", 7),
      session("archived_sessions/rollout-older.jsonl", 900)
    ]
    const compressed = session("sessions/2026/02/01/rollout-z.jsonl.zst", 1000)

    const result = await home.blctx(["install", "codex", "--step", "session_discovery", "--json"])
    expect(result.code).toBe(0)
    const report = parseJson<ReportJson>(result)
    expect(report.checks.map((c) => [c.id, c.status])).toEqual([
      ["data_directory", "passed"],
      ["session_discovery", "passed"]
    ])
    const detail = check(report).detail
    expect(detail).toContain("8 Codex session files (6 active, 2 archived)")
    expect(detail).toContain(`1 compressed (.jsonl.zst) not read yet, e.g. ${compressed}`)
    const newest = [active[0], archived[0], active[1], active[2], active[3]] as Array<string>
    const listed = detail.slice(detail.indexOf("newest: ") + "newest: ".length).split(", ")
    expect(listed).toEqual(newest)

    const snapshot = JSON.parse(
      Fs.readFileSync(NodePath.join(home.xdg.state, "blctx", "session-discovery.json"), "utf8")
    )
    expect(snapshot.newest.map((f: { path: string }) => f.path)).toEqual(newest)

    const status = await home.blctx(["status", "--step", "session_discovery", "--json"])
    expect(status.code).toBe(0)
    expect(check(parseJson<ReportJson>(status)).status).toBe("passed")
  })

  it("status fails once a recorded path is gone, and rerunning install refreshes the snapshot", async () => {
    const first = session("sessions/2026/03/01/rollout-a.jsonl", 10)
    session("sessions/2026/03/01/rollout-b.jsonl", 20)
    expect((await home.blctx(["install", "codex", "--step", "session_discovery", "--json"])).code).toBe(0)

    Fs.rmSync(first)
    const status = await home.blctx(["status", "--step", "session_discovery", "--json"])
    expect(status.code).toBe(1)
    const failed = check(parseJson<ReportJson>(status))
    expect(failed.status).toBe("failed")
    expect(failed.detail).toContain(first)
    expect(failed.remediation).toContain("blctx install codex --step session_discovery")

    const newer = session("sessions/2026/03/02/rollout-c.jsonl", 1)
    const rerun = await home.blctx(["install", "codex", "--step", "session_discovery", "--json"])
    expect(rerun.code).toBe(0)
    expect(check(parseJson<ReportJson>(rerun)).detail).toContain(`2 Codex session files (2 active, 0 archived)`)
    expect(check(parseJson<ReportJson>(rerun)).detail).toContain(`newest: ${newer}, `)
    expect((await home.blctx(["status", "--step", "session_discovery", "--json"])).code).toBe(0)
  })
})
