import * as Fs from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { NodeSafeFsLive } from "../../../layers/node-safe-fs.js"
import { SqliteOpenerLive } from "../../../layers/sqlite-opener-live.js"
import type { SafeFs } from "../../fs/safe-fs.js"
import { outsideFile, swappingSafeFs, symlinkSwap } from "../../fs/swapping-safe-fs.test-support.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths, resolvePaths } from "../../paths/paths.js"
import { ProgramPaths } from "../../paths/program-paths.js"
import type { StepRun } from "../step.js"
import { runOf } from "../step-run.test-support.js"
import { dataDirectoryStep } from "./data-directory.js"

const Database = createRequire(import.meta.url)("better-sqlite3") as new (
  file: string
) => { pragma(text: string): unknown; close(): void }

let home: string
beforeEach(() => {
  home = Fs.realpathSync(Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-dd-")))
})
afterEach(() => Fs.rmSync(home, { recursive: true, force: true }))

const inputs = () => ({
  home,
  XDG_DATA_HOME: NodePath.join(home, "data"),
  XDG_STATE_HOME: NodePath.join(home, "state")
})
const paths = () => resolvePaths(inputs())

const layer = (safeFs: Layer.Layer<SafeFs> = NodeSafeFsLive) =>
  Layer.mergeAll(
    ManifestStore.Default,
    SqliteOpenerLive,
    Layer.succeed(ProgramPaths, {
      node: process.execPath,
      cli: process.execPath,
      daemon: process.execPath,
      mcp: process.execPath,
      hook: process.execPath,
      skill: process.execPath
    })
  ).pipe(Layer.provideMerge(Paths.layerFrom(inputs())), Layer.provideMerge(safeFs))

const run = (purge = false, failedBefore: StepRun["failedBefore"] = []) => runOf("install", { purge, failedBefore })

const withStep = <A, E>(
  f: (step: Effect.Effect.Success<typeof dataDirectoryStep>) => Effect.Effect<A, E>,
  safeFs?: Layer.Layer<SafeFs>
) => Effect.flatMap(dataDirectoryStep, f).pipe(Effect.provide(layer(safeFs)))

const mode = (p: string) => Fs.statSync(p).mode & 0o777
const manifestJson = () => JSON.parse(Fs.readFileSync(paths().manifest, "utf8"))

describe("data_directory step", () => {
  it.effect("install creates private directories, a WAL database and a 0600 manifest, then verifies", () =>
    withStep((step) =>
      Effect.gen(function* () {
        const installed = yield* step.install(run())
        expect(installed.detail).toContain("created installation")
        const p = paths()
        for (const dir of [p.dataDir, p.configDir, p.cacheDir, p.stateDir]) expect(mode(dir)).toBe(0o700)
        expect(mode(p.database)).toBe(0o600)
        expect(mode(p.manifest)).toBe(0o600)
        const m = manifestJson()
        expect(m.version).toBe(1)
        expect(m.state).toBe("active")
        expect(m.installation_id).toMatch(/^[0-9a-f-]{36}$/)
        expect(m.created_directories).toContain(p.dataDir)
        expect(m.owned_files).toContain(p.database)
        const verified = yield* step.verify(run())
        expect(verified.detail).toContain(m.installation_id)
        expect(Fs.readdirSync(p.dataDir).some((f) => f.includes("creating"))).toBe(false)
      })
    )
  )

  it.effect("reinstall keeps the installation id; uninstall deactivates and verify then fails", () =>
    withStep((step) =>
      Effect.gen(function* () {
        yield* step.install(run())
        const id = manifestJson().installation_id
        yield* step.uninstall(run())
        expect(manifestJson().state).toBe("inactive")
        const failure = yield* Effect.flip(step.verify(run()))
        expect(failure.detail).toContain("retained files alone do not pass")
        yield* step.install(run())
        expect(manifestJson().installation_id).toBe(id)
        expect(manifestJson().state).toBe("active")
        yield* step.verify(run())
      })
    )
  )

  it.effect("refuses an existing context.db that no manifest claims, leaving it untouched", () =>
    withStep((step) =>
      Effect.gen(function* () {
        const p = paths()
        Fs.mkdirSync(p.dataDir, { recursive: true, mode: 0o700 })
        Fs.writeFileSync(p.database, "someone else's data", { mode: 0o600 })
        const failure = yield* Effect.flip(step.install(run()))
        expect(failure.detail).toContain(p.database)
        expect(failure.detail).toContain("no blctx manifest")
        expect(failure.remediation).toContain("aside")
        expect(Fs.readFileSync(p.database, "utf8")).toBe("someone else's data")
        expect(Fs.existsSync(p.manifest)).toBe(false)
      })
    )
  )

  it.effect("refuses a symbolic link in an owned path", () =>
    withStep((step) =>
      Effect.gen(function* () {
        const p = paths()
        const elsewhere = NodePath.join(home, "elsewhere")
        Fs.mkdirSync(elsewhere, { mode: 0o700 })
        Fs.mkdirSync(NodePath.dirname(p.dataDir), { recursive: true })
        Fs.symlinkSync(elsewhere, p.dataDir)
        const failure = yield* Effect.flip(step.install(run()))
        expect(failure.detail).toContain("symbolic link")
        expect(failure.detail).toContain(p.dataDir)
        expect(Fs.readdirSync(elsewhere)).toEqual([])
      })
    )
  )

  it.effect("refuses group/other permission bits and never repairs them", () =>
    withStep((step) =>
      Effect.gen(function* () {
        const p = paths()
        Fs.mkdirSync(p.stateDir, { recursive: true })
        Fs.chmodSync(p.stateDir, 0o755)
        const failure = yield* Effect.flip(step.install(run()))
        expect(failure.detail).toContain("0755")
        expect(failure.remediation).toBe(`Run: chmod 700 ${p.stateDir}`)
        expect(mode(p.stateDir)).toBe(0o755)
      })
    )
  )

  it.effect("refuses a corrupted manifest and an unsupported version without overwriting", () =>
    withStep((step) =>
      Effect.gen(function* () {
        yield* step.install(run())
        const p = paths()
        Fs.writeFileSync(p.manifest, "{ not json", { mode: 0o600 })
        const corrupt = yield* Effect.flip(step.install(run()))
        expect(corrupt.detail).toContain("unreadable")
        expect(Fs.readFileSync(p.manifest, "utf8")).toBe("{ not json")
        Fs.writeFileSync(p.manifest, JSON.stringify({ version: 99 }), { mode: 0o600 })
        const newer = yield* Effect.flip(step.verify(run()))
        expect(newer.detail).toContain("version 99")
      })
    )
  )

  it.effect("an interrupted first database creation is retried", () =>
    withStep((step) =>
      Effect.gen(function* () {
        yield* step.install(run())
        const p = paths()
        const id = manifestJson().installation_id
        // Simulate a crash after the manifest was written but before the database was renamed into place.
        Fs.rmSync(p.database)
        Fs.writeFileSync(NodePath.join(p.dataDir, ".context.db.creating"), "half-written", { mode: 0o600 })
        yield* step.install(run())
        expect(manifestJson().installation_id).toBe(id)
        yield* step.verify(run())
        expect(Fs.existsSync(NodePath.join(p.dataDir, ".context.db.creating"))).toBe(false)
      })
    )
  )

  it.effect("purge removes only owned files and the directories blctx created", () =>
    withStep((step) =>
      Effect.gen(function* () {
        const p = paths()
        Fs.mkdirSync(p.configDir, { recursive: true, mode: 0o700 })
        yield* step.install(run())
        const unknown = NodePath.join(p.dataDir, "notes.txt")
        Fs.writeFileSync(unknown, "mine", { mode: 0o600 })
        const purged = yield* step.uninstall(run(true))
        expect(purged.detail).toContain("kept non-empty")
        expect(Fs.readFileSync(unknown, "utf8")).toBe("mine")
        expect(Fs.existsSync(p.database)).toBe(false)
        expect(Fs.existsSync(p.manifest)).toBe(false)
        expect(Fs.existsSync(p.stateDir)).toBe(false)
        expect(Fs.existsSync(p.configDir)).toBe(true)
      })
    )
  )

  it.effect(
    "purge keeps the manifest and the data while another step could not remove what it owns; a rerun purges",
    () =>
      withStep((step) =>
        Effect.gen(function* () {
          const p = paths()
          yield* step.install(run())
          const kept = yield* Effect.flip(step.uninstall(run(true, ["codex_mcp"])))
          expect(kept.detail).toContain("codex_mcp did not remove what blctx put in place")
          expect(kept.remediation).toContain("rerun the same uninstall with --purge")
          // Nothing is lost and ownership is still on record, deactivated like a plain uninstall.
          expect(Fs.existsSync(p.database)).toBe(true)
          expect(manifestJson().state).toBe("inactive")
          const purged = yield* step.uninstall(run(true))
          expect(purged.detail).toContain("purged installation")
          expect(Fs.existsSync(p.manifest)).toBe(false)
          expect(Fs.existsSync(p.database)).toBe(false)
        })
      )
  )

  it.effect("purge removes the capture state the hooks wrote after the manifest was last written", () =>
    withStep((step) =>
      Effect.gen(function* () {
        yield* step.install(run())
        const p = paths()
        // What the hook handler writes with no manifest update: bindings, spooled events, a temp file.
        const capture = NodePath.join(p.dataDir, "capture")
        for (const dir of ["bindings", "spool"])
          Fs.mkdirSync(NodePath.join(capture, dir), { recursive: true, mode: 0o700 })
        Fs.writeFileSync(NodePath.join(capture, "bindings", "a1b2"), "{}", { mode: 0o600 })
        Fs.writeFileSync(NodePath.join(capture, "spool", "1-2-3.json"), "{}", { mode: 0o600 })
        Fs.writeFileSync(NodePath.join(capture, "spool", ".1-2-4.json.tmp"), "{", { mode: 0o600 })
        // A link inside goes as a link: what it points at is not blctx's and stays.
        const outside = NodePath.join(home, "outside.txt")
        Fs.writeFileSync(outside, "not blctx's")
        Fs.symlinkSync(outside, NodePath.join(capture, "spool", "link.json"))
        const purged = yield* step.uninstall(run(true))
        expect(purged.detail).not.toContain("kept non-empty")
        expect(Fs.existsSync(capture)).toBe(false)
        expect(Fs.existsSync(p.dataDir)).toBe(false)
        expect(Fs.readFileSync(outside, "utf8")).toBe("not blctx's")
      })
    )
  )

  it.effect("purge refuses an owned file swapped for a link after its check; the target survives", () =>
    Effect.gen(function* () {
      yield* withStep((step) => step.install(run()))
      const p = paths()
      const target = outsideFile(NodePath.join(inputs().home, "outside.db"))
      // Two lstats of the database (checkOwnership, then the owned-path checks) come before the purge's own.
      const lstatsBefore = 2
      const refused = yield* withStep(
        (step) => Effect.flip(step.uninstall(run(true))),
        swappingSafeFs({ path: p.database, call: lstatsBefore + 1, swap: symlinkSwap(p.database, target.path) })
      )
      expect(refused.detail).toBe(`${p.database} was replaced by a symbolic link between check and use; left untouched`)
      expect(target.untouched()).toBe(true)
      expect(Fs.existsSync(p.manifest)).toBe(true)
    })
  )

  it.effect("verify fails when the database belongs to another installation", () =>
    withStep((step) =>
      Effect.gen(function* () {
        yield* step.install(run())
        const p = paths()
        const m = manifestJson()
        Fs.writeFileSync(
          p.manifest,
          JSON.stringify({ ...m, installation_id: "00000000-0000-4000-8000-000000000000" }),
          { mode: 0o600 }
        )
        const failure = yield* Effect.flip(step.verify(run()))
        expect(failure.detail).toContain(m.installation_id)
        expect(failure.detail).toContain("00000000-0000-4000-8000-000000000000")
      })
    )
  )

  it.effect("diagnose (doctor) runs SQLite's quick_check and reports journal mode and sizes", () =>
    withStep((step) =>
      Effect.gen(function* () {
        const diagnose = step.diagnose
        if (diagnose === undefined) return expect.fail("data_directory has deeper checks")
        const nothing = yield* diagnose(run())
        expect(nothing.detail).toBe(`nothing deeper to check: ${paths().database} is not there`)
        yield* step.install(run())
        const ok = yield* diagnose(run())
        expect(ok.detail).toMatch(
          /^quick_check ok, journal mode wal; database \d+\.\d MiB \(\d+\.\d MiB free pages\), WAL \d+\.\d MiB$/
        )
      })
    )
  )

  it.effect("diagnose fails on a database that is not in WAL mode, and on one that is damaged", () =>
    withStep((step) =>
      Effect.gen(function* () {
        const diagnose = step.diagnose
        if (diagnose === undefined) return expect.fail("data_directory has deeper checks")
        yield* step.install(run())
        const p = paths()
        const db = new Database(p.database)
        db.pragma("journal_mode = DELETE")
        db.close()
        const journal = yield* Effect.flip(diagnose(run()))
        expect(journal.detail).toBe(
          `${p.database} is in journal mode delete; blctx needs WAL so readers never wait for the writer`
        )
        // Overwrite everything after the first page (the schema's page stays readable).
        const size = Fs.statSync(p.database).size
        const fd = Fs.openSync(p.database, "r+")
        Fs.writeSync(fd, Buffer.alloc(size - 4096, 0xa5), 0, size - 4096, 4096)
        Fs.closeSync(fd)
        const damaged = yield* Effect.flip(diagnose(run()))
        expect(damaged.detail).toMatch(
          new RegExp(`^(SQLite could not check ${p.database}: |${p.database} fails SQLite's quick_check).*malformed`)
        )
        expect(damaged.remediation).toContain(".recover")
      })
    )
  )
})
