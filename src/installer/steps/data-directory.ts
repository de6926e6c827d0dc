import { randomUUID } from "node:crypto"
import * as NodePath from "node:path"
import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Option } from "effect"
import { captureDirIn } from "../../capture/capture-paths.js"
import { InstallationId } from "../../domain/installation-id.js"
import { checkOwnership } from "../../fs/ownership.js"
import { removeOwnTree } from "../../fs/remove-tree.js"
import { removeVerified } from "../../fs/remove-verified.js"
import { SafeFs } from "../../fs/safe-fs.js"
import { MANIFEST_VERSION, Manifest } from "../../ownership/manifest.js"
import { type ManifestError, ManifestStore } from "../../ownership/manifest-store.js"
import { Paths } from "../../paths/paths.js"
import { ProgramPaths } from "../../paths/program-paths.js"
import { initializeDatabase, readIdentity } from "../../store/identity.js"
import { CURRENT_SCHEMA_VERSION } from "../../store/migrations.js"
import { withDatabase } from "../../store/sqlite-opener.js"
import { StoreError } from "../../store/store-error.js"
import { fail, type StepFailure, type StepRun } from "../step.js"
import { ownedPathFailure } from "./owned-path-failure.js"
import { stepWithServices } from "./step-context.js"

const PRIVATE_DIR = 0o700
const PRIVATE_FILE = 0o600
const CREATING_SUFFIX = ".creating"

const fromFs = ownedPathFailure

const fromStore = (e: StoreError): StepFailure =>
  fail(
    `database ${e.path}: ${e.message}`,
    `Move ${e.path} aside if it is not a blctx database, then run blctx install codex.`
  )

const fromManifest = (e: ManifestError): StepFailure =>
  e._tag === "ManifestUnsupported"
    ? fail(
        `manifest ${e.path} has version ${JSON.stringify(e.version)}; this blctx reads version ${MANIFEST_VERSION}`,
        `Use the blctx release that wrote it, or move ${e.path} aside to start a new installation.`
      )
    : fail(
        `manifest ${e.path} is unreadable: ${e.reason}; it was left untouched`,
        `Inspect ${e.path}; restore it from a backup or move it aside, then run blctx install codex.`
      )

/** A WAL file above this means checkpoints are not keeping up (a reader held open, or a stuck writer). */
export const WAL_WARN_BYTES = 64 * 1024 * 1024
/** How many of quick_check's findings a report quotes. */
const QUOTED_PROBLEMS = 3

/** What SQLite itself said: @effect/sql's SqlError keeps the driver's error as its cause. */
const sqliteMessage = (e: unknown): string => {
  const cause = typeof e === "object" && e !== null && "cause" in e ? e.cause : undefined
  if (cause instanceof Error && cause.message !== "") return cause.message
  return e instanceof Error && e.message !== "" ? e.message : String(e)
}

const mib = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`

const groupOrOther = (mode: number) => (mode & 0o077) !== 0
const groupOrOtherWrite = (mode: number) => (mode & 0o022) !== 0
const octal = (mode: number) => mode.toString(8).padStart(4, "0")

const sqliteCompanions = (db: string) => [db, `${db}-wal`, `${db}-shm`, `${db}-journal`]

/** The paths the step owns, from the person's XDG folders. */
const layoutOf = (paths: Paths) => ({
  directories: [paths.dataDir, paths.configDir, paths.cacheDir, paths.stateDir],
  creating: `${NodePath.join(paths.dataDir, ".context.db")}${CREATING_SUFFIX}`,
  ownedFiles: [...sqliteCompanions(paths.database), paths.manifest]
})
const layout = Effect.map(Paths, layoutOf)

const now = DateTime.now.pipe(Effect.map(DateTime.formatIso))

const readManifest = Effect.flatMap(ManifestStore, (manifests) => manifests.read()).pipe(Effect.mapError(fromManifest))

const writeManifest = (manifest: Manifest) =>
  Effect.flatMap(ManifestStore, (manifests) => manifests.write(manifest)).pipe(Effect.mapError(fromFs))

/** A symbolic link in a path blctx owns is refused: it never follows one. */
const linkRefused = (path: string, replaceWith: string) =>
  fail(
    `${path} is a symbolic link; blctx does not follow links in paths it owns`,
    `Replace ${path} with ${replaceWith}, then rerun.`
  )

/** Who could have written them comes first: another user's folder is refused whatever its mode. */
const checkOwners = (paths: ReadonlyArray<string>) =>
  Effect.forEach(
    paths,
    (path) =>
      checkOwnership(path).pipe(
        Effect.mapError((e) => (e._tag === "OwnershipProblem" ? fail(e.detail, e.remediation) : fromFs(e)))
      ),
    { discard: true }
  )

/** One of the step's directories: a real directory, private (the config folder only not writable by others). */
const checkDirectory = (dir: string, configDir: string) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const entry = yield* fs.lstat(dir).pipe(Effect.mapError(fromFs))
    if (Option.isNone(entry)) return
    if (entry.value.kind === "symlink") {
      return yield* linkRefused(dir, "a real directory (or point the XDG variable at one)")
    }
    if (entry.value.kind !== "directory") {
      return yield* fail(`${dir} exists and is not a directory`, `Move ${dir} aside, then rerun.`)
    }
    // The config folder holds no secrets (keys come from the environment), so a folder the
    // person made with `mkdir -p` (0755) is fine; only write access for others is refused.
    if (dir === configDir) {
      if (groupOrOtherWrite(entry.value.mode)) {
        return yield* fail(
          `${dir} has unsafe permissions ${octal(entry.value.mode)}: other users could change blctx's configuration`,
          `Run: chmod go-w ${dir}`
        )
      }
    } else if (groupOrOther(entry.value.mode)) {
      return yield* fail(
        `${dir} has unsafe permissions ${octal(entry.value.mode)} (group/other access); blctx requires 0700`,
        `Run: chmod 700 ${dir}`
      )
    }
  })

/** One of the step's files (the database, the manifest): a regular file, private. */
const checkFile = (file: string) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const entry = yield* fs.lstat(file).pipe(Effect.mapError(fromFs))
    if (Option.isNone(entry)) return
    if (entry.value.kind === "symlink") return yield* linkRefused(file, "the real file")
    if (entry.value.kind !== "file") {
      return yield* fail(`${file} exists and is not a regular file`, `Move ${file} aside, then rerun.`)
    }
    if (groupOrOther(entry.value.mode)) {
      return yield* fail(
        `${file} has unsafe permissions ${octal(entry.value.mode)} (group/other access); blctx requires 0600`,
        `Run: chmod 600 ${file}`
      )
    }
  })

/** Refuses symbolic links and group/other permission bits on every path blctx owns. */
const checkOwnedPaths = Effect.gen(function* () {
  const paths = yield* Paths
  const { directories } = layoutOf(paths)
  yield* checkOwners([...directories, paths.database, paths.manifest])
  for (const dir of directories) yield* checkDirectory(dir, paths.configDir)
  for (const file of [paths.database, paths.manifest]) yield* checkFile(file)
})

/** mkdir -p with 0700, returning the directories it actually created (outermost first). */
const ensureDirectory = (dir: string): Effect.Effect<ReadonlyArray<string>, StepFailure, SafeFs> =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const missing: Array<string> = []
    let cursor = dir
    while (true) {
      const entry = yield* fs.lstat(cursor).pipe(Effect.mapError(fromFs))
      if (Option.isSome(entry)) {
        if (entry.value.kind === "directory") break
        // An ancestor that is a link to a directory is the person's own layout; follow it there only.
        if (entry.value.kind === "symlink" && cursor !== dir) break
        return yield* fail(`${cursor} exists and is not a directory`, `Move ${cursor} aside, then rerun.`)
      }
      missing.unshift(cursor)
      const parent = NodePath.dirname(cursor)
      if (parent === cursor) break
      cursor = parent
    }
    for (const d of missing) yield* fs.makeDirectory(d, PRIVATE_DIR).pipe(Effect.mapError(fromFs))
    return missing
  })

const readIdentityOf = (file: string) => withDatabase({ filename: file, readonly: true }, readIdentity(file))

/** Creates the database under a temporary name and renames it into place once complete. */
const createDatabase = (id: InstallationId) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const paths = yield* Paths
    const { creating } = layoutOf(paths)
    for (const leftover of sqliteCompanions(creating)) yield* fs.removeFile(leftover).pipe(Effect.mapError(fromFs))
    yield* fs.writeAtomic(creating, new Uint8Array(), PRIVATE_FILE).pipe(Effect.mapError(fromFs))
    yield* withDatabase({ filename: creating, readonly: false }, initializeDatabase(creating, id)).pipe(
      Effect.mapError(fromStore)
    )
    yield* fs.fsyncFile(creating).pipe(Effect.mapError(fromFs))
    yield* fs.renameDurable(creating, paths.database).pipe(Effect.mapError(fromFs))
  })

/** Brings an existing database of this installation to the current schema; another's or a newer one is refused. */
const migrateDatabase = (id: InstallationId) =>
  Effect.gen(function* () {
    const { database } = yield* Paths
    const identity = yield* readIdentityOf(database).pipe(Effect.mapError(fromStore))
    if (Option.isSome(identity.installationId) && identity.installationId.value !== id) {
      return yield* fail(
        `${database} belongs to installation ${identity.installationId.value}, not ${id}; it was left untouched`,
        `Move ${database} aside, or restore the manifest that owns it.`
      )
    }
    if (identity.schemaVersion > CURRENT_SCHEMA_VERSION) {
      return yield* fail(
        `${database} has schema version ${identity.schemaVersion}, newer than this blctx (${CURRENT_SCHEMA_VERSION})`,
        "Upgrade blctx to the release that wrote this database."
      )
    }
    yield* withDatabase({ filename: database, readonly: false }, initializeDatabase(database, id)).pipe(
      Effect.mapError(fromStore)
    )
  })

/** The manifest of a new installation, `inactive` until its database exists. */
const newManifest = (id: InstallationId, created: ReadonlyArray<string>, timestamp: string) =>
  Effect.gen(function* () {
    const programs = yield* ProgramPaths
    const { ownedFiles } = yield* layout
    return new Manifest({
      version: MANIFEST_VERSION,
      installation_id: id,
      state: "inactive",
      owned_files: ownedFiles,
      created_directories: created,
      node: programs.node,
      cli: programs.cli,
      created_at: timestamp,
      updated_at: timestamp,
      choices: {}
    })
  })

/** The manifest once the database is in place: active, owning every path the step made, naming the programs now. */
const activeManifest = (base: Manifest, created: ReadonlyArray<string>, timestamp: string) =>
  Effect.gen(function* () {
    const programs = yield* ProgramPaths
    const { ownedFiles } = yield* layout
    return new Manifest({
      ...base,
      state: "active",
      owned_files: [...new Set([...base.owned_files, ...ownedFiles])],
      created_directories: [...new Set([...base.created_directories, ...created])],
      node: programs.node,
      cli: programs.cli,
      updated_at: timestamp
    })
  })

const install = Effect.fn("DataDirectory.install")(function* () {
  const fs = yield* SafeFs
  const paths = yield* Paths
  yield* checkOwnedPaths
  const existing = yield* readManifest
  const database = yield* fs.lstat(paths.database).pipe(Effect.mapError(fromFs))
  if (Option.isNone(existing) && Option.isSome(database)) {
    return yield* fail(
      `${paths.database} exists but no blctx manifest claims it; it was left untouched`,
      `Move ${paths.database} aside (or restore ${paths.manifest}), then run blctx install codex.`
    )
  }
  const created: Array<string> = []
  for (const dir of layoutOf(paths).directories) created.push(...(yield* ensureDirectory(dir)))
  const timestamp = yield* now
  const id = Option.match(existing, {
    onNone: () => InstallationId.make(randomUUID()),
    onSome: (m) => m.installation_id
  })
  const base = Option.isSome(existing) ? existing.value : yield* newManifest(id, created, timestamp)
  // Recorded before the database exists, so an interrupted first install is retried as ours.
  if (Option.isNone(existing)) yield* writeManifest(base)
  if (Option.isNone(database)) yield* createDatabase(id)
  else yield* migrateDatabase(id)
  yield* writeManifest(yield* activeManifest(base, created, timestamp))
  const reused = Option.isSome(existing) ? "kept" : "created"
  // The installation is kept (its manifest survived) but its database was gone: say so, since
  // whatever it held is not in the new one.
  const recreated =
    Option.isSome(existing) && Option.isNone(database)
      ? `; its database was missing, so ${paths.database} is a new, empty one`
      : ""
  return { detail: `${reused} installation ${id} in ${paths.dataDir} (schema v${CURRENT_SCHEMA_VERSION})${recreated}` }
})

/** Every directory is there and writable by this user. */
const checkWritable = (directories: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    for (const dir of directories) {
      if (!(yield* fs.exists(dir))) {
        return yield* fail(`${dir} does not exist`, "Run: blctx install codex --step data_directory")
      }
      const access = yield* fs.writability(dir)
      if (access === "read_only_filesystem") {
        return yield* fail(
          `${dir} is not writable: it is on a read-only filesystem, so blctx cannot write its index there`,
          `Remount the filesystem holding ${dir} read-write (or point XDG_DATA_HOME at a writable one), then run: blctx doctor`
        )
      }
      if (access === "denied") {
        return yield* fail(`${dir} is not writable by this user`, `Check the owner of ${dir} (it must be you).`)
      }
    }
  })

/** The manifest of an active installation; none, or an uninstalled one, fails. */
const activeInstallation = Effect.gen(function* () {
  const paths = yield* Paths
  const manifest = yield* readManifest
  if (Option.isNone(manifest)) {
    return yield* fail(`no manifest at ${paths.manifest}: blctx is not installed`, "Run: blctx install codex")
  }
  const m = manifest.value
  if (m.state !== "active") {
    return yield* fail(
      `installation ${m.installation_id} is inactive (uninstalled); retained files alone do not pass`,
      "Run: blctx install codex"
    )
  }
  return m
})

/** The database is there, at the current schema, and belongs to the manifest's installation; its schema version. */
const checkDatabase = (m: Manifest) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const { database } = yield* Paths
    if (!(yield* fs.exists(database))) {
      return yield* fail(`${database} is missing`, "Run: blctx install codex --step data_directory")
    }
    const identity = yield* readIdentityOf(database).pipe(Effect.mapError(fromStore))
    if (identity.schemaVersion !== CURRENT_SCHEMA_VERSION) {
      return yield* fail(
        `${database} has schema version ${identity.schemaVersion}; this blctx expects ${CURRENT_SCHEMA_VERSION}`,
        "Run: blctx install codex --step data_directory"
      )
    }
    const dbId = Option.getOrElse(identity.installationId, () => "none")
    if (dbId !== m.installation_id) {
      return yield* fail(
        `${database} belongs to installation ${dbId}, but the manifest names ${m.installation_id}`,
        `Move ${database} aside, or restore the manifest that owns it.`
      )
    }
    return identity.schemaVersion
  })

const verify = Effect.fn("DataDirectory.verify")(function* () {
  const fs = yield* SafeFs
  yield* checkOwnedPaths
  yield* checkWritable((yield* layout).directories)
  const m = yield* activeInstallation
  const schemaVersion = yield* checkDatabase(m)
  for (const program of [m.node, m.cli]) {
    if (!(yield* fs.exists(program))) {
      return yield* fail(
        `recorded program ${program} no longer exists`,
        "Run: blctx install codex (to record the current paths)"
      )
    }
  }
  return { detail: `installation ${m.installation_id}, private directories, schema v${schemaVersion}` }
})

const recoverHint = (database: string) =>
  `Stop blctxd (blctx uninstall codex), copy ${database} aside as a backup, then recover what SQLite can read: sqlite3 ${database} .recover`

/** What SQLite says of the database, read-only: quick_check's findings, the journal mode, sizes. */
const databaseFacts = (database: string) =>
  withDatabase(
    { filename: database, readonly: true },
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      // PRAGMA answers have SQLite's own fixed shapes, and every use below tolerates a missing
      // row or value (quick_check's column name even varies), so they stay unchecked.
      const check = yield* sql<Record<string, string>>`PRAGMA quick_check`
      const journal = yield* sql<{ journal_mode: string }>`PRAGMA journal_mode`
      const pages = yield* sql<{ page_count: number }>`PRAGMA page_count`
      const pageSize = yield* sql<{ page_size: number }>`PRAGMA page_size`
      const free = yield* sql<{ freelist_count: number }>`PRAGMA freelist_count`
      return {
        problems: check.map((row) => String(Object.values(row)[0] ?? "")).filter((line) => line !== "ok"),
        journal: journal[0]?.journal_mode ?? "unknown",
        bytes: (pages[0]?.page_count ?? 0) * (pageSize[0]?.page_size ?? 0),
        freeBytes: (free[0]?.freelist_count ?? 0) * (pageSize[0]?.page_size ?? 0)
      }
    }).pipe(Effect.mapError((e) => new StoreError({ path: database, message: sqliteMessage(e) })))
  ).pipe(
    Effect.mapError((e) => fail(`SQLite could not check ${database}: ${e.message}`, recoverHint(database), e._tag))
  )

/**
 * Doctor: SQLite's own consistency check (`PRAGMA quick_check`: every page, index order and
 * constraints, without the cross-checks of integrity_check that scale worse), the journal mode
 * the daemon relies on, and the database and WAL sizes. Read-only; never repairs.
 */
const diagnose = Effect.fn("DataDirectory.diagnose")(function* () {
  const fs = yield* SafeFs
  const { database } = yield* Paths
  const entry = yield* fs.lstat(database).pipe(Effect.mapError(fromFs))
  if (Option.isNone(entry) || entry.value.kind !== "file") {
    return { detail: `nothing deeper to check: ${database} is not there` }
  }
  const facts = yield* databaseFacts(database)
  const wal = yield* fs.lstat(`${database}-wal`).pipe(Effect.mapError(fromFs))
  const walBytes = Option.match(wal, { onNone: () => 0, onSome: (e) => e.size })
  if (facts.problems.length > 0) {
    return yield* fail(
      `${database} fails SQLite's quick_check (${facts.problems.length} problems): ${facts.problems.slice(0, QUOTED_PROBLEMS).join("; ")}`,
      recoverHint(database)
    )
  }
  if (facts.journal !== "wal") {
    return yield* fail(
      `${database} is in journal mode ${facts.journal}; blctx needs WAL so readers never wait for the writer`,
      "Run: blctx install codex --step data_directory"
    )
  }
  const sizes = `database ${mib(facts.bytes)} (${mib(facts.freeBytes)} free pages), WAL ${mib(walBytes)}`
  if (walBytes > WAL_WARN_BYTES) {
    return yield* fail(
      `${database}-wal is ${mib(walBytes)}: checkpoints are not keeping up (a long-lived reader or a stuck writer); ${sizes}`,
      "Restart the daemon so it checkpoints: blctx install codex --step background_service"
    )
  }
  return { detail: `quick_check ok, journal mode wal; ${sizes}` }
})

/** Removes the owned files (not the manifest), and the capture folder whole; how many went. */
const removeOwnedFiles = (m: Manifest) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const paths = yield* Paths
    let removed = 0
    for (const file of m.owned_files) {
      if (file === paths.manifest) continue
      const entry = yield* fs.lstat(file).pipe(Effect.mapError(fromFs))
      if (Option.isSome(entry) && entry.value.kind === "file") {
        // Only the file just checked: a link or another file swapped in since is refused.
        yield* removeVerified(file, entry.value).pipe(Effect.mapError(fromFs))
        removed++
      }
    }
    // The hooks write bindings and spooled events without touching the manifest: the capture
    // folder is blctx's whole, so it goes whole.
    removed += yield* removeOwnTree(captureDirIn(paths.dataDir)).pipe(Effect.mapError(fromFs))
    return removed
  })

/** Removes the directories the step created, deepest first; those still holding something are kept. */
const removeCreatedDirectories = (m: Manifest) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const kept: Array<string> = []
    const deepestFirst = [...m.created_directories].sort((a, b) => b.length - a.length)
    for (const dir of deepestFirst) {
      const gone = yield* fs.removeEmptyDirectory(dir).pipe(Effect.mapError(fromFs))
      if (!gone && (yield* fs.exists(dir))) kept.push(dir)
    }
    return kept
  })

const uninstall = Effect.fn("DataDirectory.uninstall")(function* (run: StepRun) {
  const paths = yield* Paths
  yield* checkOwnedPaths
  const manifest = yield* readManifest
  if (Option.isNone(manifest)) return { detail: "nothing to uninstall: no manifest" }
  const m = manifest.value
  const deactivate = writeManifest(new Manifest({ ...m, state: "inactive", updated_at: yield* now }))
  if (!run.purge) {
    yield* deactivate
    return { detail: `installation ${m.installation_id} deactivated; data kept in ${paths.dataDir}` }
  }
  if (run.failedBefore.length > 0) {
    // Purged now, what those steps left in place would be nobody's: no later run would remove
    // it, and a new install would refuse it as not blctx's.
    yield* deactivate
    const failed = run.failedBefore.join(", ")
    return yield* fail(
      `kept installation ${m.installation_id} (deactivated, data in ${paths.dataDir}) and its manifest: ${failed} did not remove what blctx put in place, and the manifest is what tells a later run it is blctx's`,
      `Fix ${failed} as its row says, then rerun the same uninstall with --purge.`
    )
  }
  const removedFiles = yield* removeOwnedFiles(m)
  // The manifest goes last: until then a rerun can finish an interrupted purge.
  yield* Effect.flatMap(ManifestStore, (manifests) => manifests.remove()).pipe(Effect.mapError(fromFs))
  const kept = yield* removeCreatedDirectories(m)
  const keptNote = kept.length > 0 ? `; kept non-empty ${kept.join(", ")}` : ""
  return { detail: `purged installation ${m.installation_id}: removed ${removedFiles + 1} owned files${keptNote}` }
})

/**
 * The private data directory: four 0700 directories, `context.db` and the ownership manifest.
 * Refuses anything it does not own, never follows symbolic links, never loosens or repairs modes.
 */
export const dataDirectoryStep = stepWithServices(
  { id: "data_directory", title: "Private data directory", requires: [] },
  {
    install: () => install(),
    verify: () => verify(),
    diagnose: () => diagnose(),
    uninstall: (run) => uninstall(run)
  }
)
