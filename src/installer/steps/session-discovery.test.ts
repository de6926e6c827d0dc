import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { NodeSafeFsLive } from "../../../layers/node-safe-fs.js"
import { Paths, resolvePaths } from "../../paths/paths.js"
import { discoverySnapshotPath } from "../../transcripts/discovery-snapshot.js"
import { runOf } from "../step-run.test-support.js"
import { sessionDiscoveryStep } from "./session-discovery.js"

let home: string
beforeEach(() => {
  home = Fs.realpathSync(Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-sd-")))
})
afterEach(() => Fs.rmSync(home, { recursive: true, force: true }))

const inputs = () => ({
  home,
  XDG_STATE_HOME: NodePath.join(home, "state"),
  CODEX_HOME: NodePath.join(home, "codex")
})
const paths = () => resolvePaths(inputs())
const layer = () => Layer.provideMerge(Paths.layerFrom(inputs()), NodeSafeFsLive)
const run = (purge = false) => runOf("install", { purge })
const withStep = <A, E>(f: (step: Effect.Effect.Success<typeof sessionDiscoveryStep>) => Effect.Effect<A, E>) =>
  Effect.flatMap(sessionDiscoveryStep, f).pipe(Effect.provide(layer()))

/** Writes a session file with a given age in minutes (older = smaller mtime). */
const session = (relative: string, minutesAgo: number) => {
  const path = NodePath.join(paths().codexHome, relative)
  Fs.mkdirSync(NodePath.dirname(path), { recursive: true })
  Fs.writeFileSync(path, '{"type":"session_meta","payload":{}}\n')
  const when = new Date(Date.parse("2026-03-10T12:00:00Z") - minutesAgo * 60_000)
  Fs.utimesSync(path, when, when)
  return path
}

const setup = () => {
  Fs.mkdirSync(paths().stateDir, { recursive: true, mode: 0o700 })
  const active = [10, 20, 30, 40, 50, 60, 70].map((m, i) =>
    session(`sessions/2026/03/${String(10 - i).padStart(2, "0")}/rollout-${i}.jsonl`, m)
  )
  const archived = [session("archived_sessions/rollout-a.jsonl", 15), session("archived_sessions/rollout-b.jsonl", 500)]
  session("sessions/2026/03/01/rollout-old.jsonl.zst", 900)
  session("sessions/2026/03/01/notes.txt", 1)
  const elsewhere = NodePath.join(home, "elsewhere")
  Fs.mkdirSync(elsewhere)
  Fs.writeFileSync(NodePath.join(elsewhere, "rollout-linked.jsonl"), "{}\n")
  Fs.symlinkSync(elsewhere, NodePath.join(paths().codexHome, "sessions", "linked-dir"))
  Fs.symlinkSync(active[0] ?? "", NodePath.join(paths().codexHome, "sessions", "linked.jsonl"))
  return { active, archived }
}

const snapshot = () => JSON.parse(Fs.readFileSync(discoverySnapshotPath(paths().stateDir), "utf8"))

describe("session_discovery step", () => {
  it.effect("counts active and archived sessions and records the five newest, following no links", () =>
    withStep((step) =>
      Effect.gen(function* () {
        const { active, archived } = setup()
        const installed = yield* step.install(run())
        const s = snapshot()
        expect([s.total, s.active, s.archived, s.skipped_links]).toEqual([9, 7, 2, 2])
        expect(s.compressed.count).toBe(1)
        const newest = [active[0], archived[0], active[1], active[2], active[3]]
        expect(s.newest.map((f: { path: string }) => f.path)).toEqual(newest)
        expect(Fs.statSync(discoverySnapshotPath(paths().stateDir)).mode & 0o777).toBe(0o600)
        expect(installed.detail).toContain("9 Codex session files (7 active, 2 archived)")
        for (const p of newest) expect(installed.detail).toContain(p)
        const verified = yield* step.verify(run())
        expect(verified.detail).toBe(installed.detail)
      })
    )
  )

  it.effect("verify fails when a recorded path is gone; rerunning install refreshes the snapshot", () =>
    withStep((step) =>
      Effect.gen(function* () {
        const { active } = setup()
        yield* step.install(run())
        Fs.rmSync(active[0] ?? "")
        const failure = yield* Effect.flip(step.verify(run()))
        expect(failure.detail).toContain(active[0])
        expect(failure.remediation).toContain("--step session_discovery")
        yield* step.install(run())
        expect(snapshot().total).toBe(8)
        yield* step.verify(run())
      })
    )
  )

  it.effect("verify without a snapshot fails with a remediation; no sessions at all still passes", () =>
    withStep((step) =>
      Effect.gen(function* () {
        Fs.mkdirSync(paths().stateDir, { recursive: true })
        const missing = yield* Effect.flip(step.verify(run()))
        expect(missing.detail).toContain("no session snapshot")
        const installed = yield* step.install(run())
        expect(installed.detail).toContain("no Codex session files yet")
        expect(snapshot().newest).toEqual([])
      })
    )
  )

  it.effect("the snapshot says which format found each home and file; an older snapshot without them still reads", () =>
    withStep((step) =>
      Effect.gen(function* () {
        setup()
        const installed = yield* step.install(run())
        const s = snapshot()
        const codexHome = paths().codexHome
        expect(s.codex_home).toBe(codexHome)
        expect(s.homes).toEqual([
          {
            format: "codex",
            agent: "codex",
            label: "Codex",
            home: codexHome,
            folders: [NodePath.join(codexHome, "sessions"), NodePath.join(codexHome, "archived_sessions")],
            total: 9,
            active: 7,
            archived: 2
          },
          {
            format: "claude",
            agent: "claude",
            label: "Claude Code",
            home: paths().claudeHome,
            folders: [NodePath.join(paths().claudeHome, "projects")],
            total: 0,
            active: 0,
            archived: 0
          },
          {
            format: "gemini",
            agent: "gemini",
            label: "Gemini CLI",
            home: paths().geminiHome,
            folders: [NodePath.join(paths().geminiHome, "tmp")],
            total: 0,
            active: 0,
            archived: 0
          }
        ])
        expect(new Set(s.newest.map((f: { format: string }) => f.format))).toEqual(new Set(["codex"]))
        // Written by the previous release: no homes, no formats. Described as before: Codex's
        // files only, since that release knew no other agent.
        const { homes: _homes, ...older } = s
        Fs.writeFileSync(
          discoverySnapshotPath(paths().stateDir),
          JSON.stringify({ ...older, newest: s.newest.map(({ format: _f, ...f }: { format: string }) => f) })
        )
        expect((yield* step.verify(run())).detail).toBe(
          installed.detail.replace(/ no (?:Claude Code|Gemini CLI) session files yet under [^;]+;/g, "")
        )
      })
    )
  )

  it.effect("uninstall keeps the snapshot unless purging", () =>
    withStep((step) =>
      Effect.gen(function* () {
        setup()
        yield* step.install(run())
        yield* step.uninstall(run(false))
        expect(Fs.existsSync(discoverySnapshotPath(paths().stateDir))).toBe(true)
        yield* step.uninstall(run(true))
        expect(Fs.existsSync(discoverySnapshotPath(paths().stateDir))).toBe(false)
      })
    )
  )

  it.effect("diagnose (doctor) walks again and compares with the snapshot, writing nothing", () =>
    withStep((step) =>
      Effect.gen(function* () {
        const diagnose = step.diagnose
        if (diagnose === undefined) return expect.fail("session_discovery has deeper checks")
        setup()
        yield* step.install(run())
        const at = snapshot().discovered_at
        const same = yield* diagnose(run())
        expect(same.detail).toBe(
          `9 session files now (7 active, 2 archived), as many as the snapshot of ${at} (9); no session is newer than the ones recorded for history_index`
        )
        const before = Fs.readFileSync(discoverySnapshotPath(paths().stateDir), "utf8")
        session("sessions/2026/03/11/rollout-new.jsonl", 1)
        const grown = yield* diagnose(run())
        expect(grown.detail).toBe(
          `10 session files now (8 active, 2 archived), 1 more than the snapshot of ${at} (9); 1 session is newer than the ones recorded for history_index (refresh: blctx install codex --step session_discovery)`
        )
        expect(Fs.readFileSync(discoverySnapshotPath(paths().stateDir), "utf8")).toBe(before)
      })
    )
  )
})
