import * as NodePath from "node:path"
import { DateTime, Effect, Either, Option } from "effect"
import { type FsError, SafeFs } from "../../fs/safe-fs.js"
import { Paths } from "../../paths/paths.js"
import { discoverSessions } from "../../transcripts/discovery.js"
import {
  type DiscoverySnapshot,
  decodeDiscoverySnapshot,
  discoverySnapshotPath,
  NEWEST_COUNT
} from "../../transcripts/discovery-snapshot.js"
import { fail, type Step, type StepFailure } from "../step.js"

const PRIVATE_FILE = 0o600

const fromFs = (e: FsError): StepFailure =>
  fail(`${e.op} ${e.path} failed: ${e.code}`, `Check that ${NodePath.dirname(e.path)} exists and that you can read it.`)

const describe = (s: DiscoverySnapshot): string => {
  const where = `${NodePath.join(s.codex_home, "sessions")} and ${NodePath.join(s.codex_home, "archived_sessions")}`
  if (s.total === 0) return `no Codex session files yet under ${where}`
  const compressed =
    s.compressed.count > 0
      ? `; ${s.compressed.count} compressed (.jsonl.zst) not read yet, e.g. ${s.compressed.paths[0] ?? ""}`
      : ""
  const newest = s.newest.map((f) => f.path).join(", ")
  return `${s.total} Codex session files (${s.active} active, ${s.archived} archived)${compressed}; newest: ${newest}`
}

/**
 * Finds Codex session files from metadata alone (no link followed, no file opened) and records
 * the counts and the five newest paths in the state directory for history_index. Creates no
 * index and enqueues nothing; rerunning refreshes the snapshot.
 */
export const sessionDiscoveryStep = Effect.gen(function* () {
  const fs = yield* SafeFs
  const paths = yield* Paths
  const snapshotPath = discoverySnapshotPath(paths.stateDir)

  const install = Effect.fn("SessionDiscovery.install")(function* () {
    const found = yield* discoverSessions(paths.codexHome).pipe(
      Effect.provideService(SafeFs, fs),
      Effect.mapError(fromFs)
    )
    const snapshot: DiscoverySnapshot = {
      version: 1,
      discovered_at: DateTime.formatIso(yield* DateTime.now),
      codex_home: paths.codexHome,
      total: found.files.length,
      active: found.activeCount,
      archived: found.archivedCount,
      compressed: { count: found.compressed.length, paths: found.compressed },
      skipped_links: found.skippedLinks,
      newest: found.files.slice(0, NEWEST_COUNT).map((f) => ({
        path: f.path,
        size: f.size,
        modified_at: DateTime.formatIso(DateTime.unsafeMake(f.mtimeMs)),
        archived: f.archived
      }))
    }
    yield* fs
      .writeAtomic(snapshotPath, `${JSON.stringify(snapshot, null, 2)}\n`, PRIVATE_FILE)
      .pipe(Effect.mapError(fromFs))
    return { detail: describe(snapshot) }
  })

  const verify = Effect.fn("SessionDiscovery.verify")(function* () {
    const entry = yield* fs.lstat(snapshotPath).pipe(Effect.mapError(fromFs))
    if (Option.isNone(entry)) {
      return yield* fail(`no session snapshot at ${snapshotPath}`, "Run: blctx install codex --step session_discovery")
    }
    const text = yield* fs.readText(snapshotPath).pipe(Effect.mapError(fromFs))
    const decoded = decodeDiscoverySnapshot(text)
    if (Either.isLeft(decoded)) {
      return yield* fail(
        `session snapshot ${snapshotPath} is unreadable`,
        "Run: blctx install codex --step session_discovery (it rewrites the snapshot)"
      )
    }
    const snapshot = decoded.right
    const gone: Array<string> = []
    for (const f of snapshot.newest) if (!(yield* fs.exists(f.path))) gone.push(f.path)
    if (gone.length > 0) {
      return yield* fail(
        `${gone.length} of the newest recorded sessions no longer exist: ${gone.join(", ")}`,
        "Run: blctx install codex --step session_discovery (to refresh the snapshot)"
      )
    }
    return { detail: describe(snapshot) }
  })

  const uninstall = Effect.fn("SessionDiscovery.uninstall")(function* (purge: boolean) {
    if (!purge) return { detail: `kept the session snapshot ${snapshotPath}` }
    yield* fs.removeFile(snapshotPath).pipe(Effect.mapError(fromFs))
    return { detail: `removed the session snapshot ${snapshotPath}` }
  })

  const step: Step = {
    id: "session_discovery",
    title: "Codex session discovery",
    requires: ["data_directory"],
    install: () => install(),
    verify: () => verify(),
    uninstall: (run) => uninstall(run.purge)
  }
  return step
})
