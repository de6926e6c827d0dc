import * as NodePath from "node:path"
import { DateTime, Effect, Either, Option } from "effect"
import { type FsError, SafeFs } from "../../fs/safe-fs.js"
import { Paths } from "../../paths/paths.js"
import { defaultTargets, discoverTranscripts, discoveryTotals, shownFile } from "../../transcripts/discovery.js"
import {
  type DiscoverySnapshot,
  decodeDiscoverySnapshot,
  discoverySnapshotPath,
  NEWEST_COUNT,
  type SnapshotHome
} from "../../transcripts/discovery-snapshot.js"
import { TRANSCRIPT_FORMATS } from "../../transcripts/formats/registry.js"
import { fail, type StepFailure } from "../step.js"
import { stepWithServices } from "./step-context.js"

const PRIVATE_FILE = 0o600

const fromFs = (e: FsError): StepFailure =>
  fail(`${e.op} ${e.path} failed: ${e.code}`, `Check that ${NodePath.dirname(e.path)} exists and that you can read it.`)

/** A snapshot written before `homes` existed: Codex was the only format. */
const homesOf = (s: DiscoverySnapshot): ReadonlyArray<SnapshotHome> =>
  s.homes ?? [
    {
      format: "codex",
      agent: "codex",
      label: "Codex",
      home: s.codex_home,
      folders: [NodePath.join(s.codex_home, "sessions"), NodePath.join(s.codex_home, "archived_sessions")],
      total: s.total,
      active: s.active,
      archived: s.archived
    }
  ]

/** Each format's count (or where it found none), then what is not read and the newest files. */
const describe = (s: DiscoverySnapshot): string => {
  const perHome = homesOf(s)
    .map((h) =>
      h.total === 0
        ? `no ${h.label} session files yet under ${h.folders.join(" and ")}`
        : `${h.total} ${h.label} session files (${h.active} active, ${h.archived} archived)`
    )
    .join("; ")
  if (s.total === 0) return perHome
  const compressed =
    s.compressed.count > 0
      ? `; ${s.compressed.count} compressed (.jsonl.zst) not read yet, e.g. ${s.compressed.paths[0] ?? ""}`
      : ""
  const newest = s.newest.map((f) => f.path).join(", ")
  return `${perHome}${compressed}; newest: ${newest}`
}

const snapshotPathOf = Effect.map(Paths, (paths) => discoverySnapshotPath(paths.stateDir))

/** Every format's session files at its agent's home, from metadata alone. */
const discover = Effect.flatMap(Paths, (paths) => discoverTranscripts(defaultTargets(paths))).pipe(
  Effect.mapError(fromFs)
)

const install = Effect.fn("SessionDiscovery.install")(function* () {
  const fs = yield* SafeFs
  const paths = yield* Paths
  const found = yield* discover
  const snapshot: DiscoverySnapshot = {
    version: 1,
    discovered_at: DateTime.formatIso(yield* DateTime.now),
    codex_home: paths.codexHome,
    ...discoveryTotals(found),
    newest: found.files.slice(0, NEWEST_COUNT).map(shownFile)
  }
  yield* fs
    .writeAtomic(discoverySnapshotPath(paths.stateDir), `${JSON.stringify(snapshot, null, 2)}\n`, PRIVATE_FILE)
    .pipe(Effect.mapError(fromFs))
  return { detail: describe(snapshot) }
})

/** The recorded snapshot; none or an unreadable one fails. */
const readSnapshot = Effect.gen(function* () {
  const fs = yield* SafeFs
  const snapshotPath = yield* snapshotPathOf
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
  return decoded.right
})

const verify = Effect.fn("SessionDiscovery.verify")(function* () {
  const fs = yield* SafeFs
  const snapshot = yield* readSnapshot
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

/**
 * Doctor: walks the session folders again (metadata only, as install does, writing nothing) and
 * compares with the snapshot: how many files appeared or went, and whether newer sessions exist
 * than the ones history_index was given.
 */
const diagnose = Effect.fn("SessionDiscovery.diagnose")(function* () {
  const fs = yield* SafeFs
  const text = yield* fs.readText(yield* snapshotPathOf).pipe(Effect.option)
  const snapshot = Option.flatMap(text, (t) => Either.getRight(decodeDiscoverySnapshot(t)))
  const found = yield* discover
  const now = `${found.files.length} session files now (${found.activeCount} active, ${found.archivedCount} archived)`
  if (Option.isNone(snapshot)) return { detail: `${now}; no readable snapshot to compare with` }
  const s = snapshot.value
  const recorded = new Set(s.newest.map((f) => f.path))
  const newestAt = Math.max(0, ...s.newest.map((f) => Date.parse(f.modified_at)).filter(Number.isFinite))
  const newer = found.files.filter((f) => !recorded.has(f.path) && f.mtimeMs > newestAt).length
  const change = found.files.length - s.total
  const delta = change === 0 ? "as many as" : change > 0 ? `${change} more than` : `${-change} fewer than`
  const snapshotSays = `${delta} the snapshot of ${s.discovered_at} (${s.total})`
  const fresher =
    newer === 0
      ? "no session is newer than the ones recorded for history_index"
      : `${newer} ${newer === 1 ? "session is" : "sessions are"} newer than the ones recorded for history_index (refresh: blctx install codex --step session_discovery)`
  return { detail: `${now}, ${snapshotSays}; ${fresher}` }
})

const uninstall = Effect.fn("SessionDiscovery.uninstall")(function* (purge: boolean) {
  const fs = yield* SafeFs
  const snapshotPath = yield* snapshotPathOf
  if (!purge) return { detail: `kept the session snapshot ${snapshotPath}` }
  yield* fs.removeFile(snapshotPath).pipe(Effect.mapError(fromFs))
  return { detail: `removed the session snapshot ${snapshotPath}` }
})

/**
 * Finds the session files of every registered transcript format (`src/transcripts/formats`),
 * each at its agent's home, from metadata alone (no link followed, no file opened), and records
 * the counts and the five newest paths in the state directory for history_index. Creates no
 * index and enqueues nothing; rerunning refreshes the snapshot.
 */
export const sessionDiscoveryStep = stepWithServices(
  {
    id: "session_discovery",
    title: `Session discovery (${TRANSCRIPT_FORMATS.map((f) => f.label).join(", ")})`,
    requires: ["data_directory"]
  },
  {
    install: () => install(),
    verify: () => verify(),
    diagnose: () => diagnose(),
    uninstall: (run) => uninstall(run.purge)
  }
)
