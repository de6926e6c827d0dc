import * as NodePath from "node:path"
import { type Context, DateTime, Effect, Option } from "effect"
import type { SafeFs, StatEntry } from "../../fs/safe-fs.js"
import { fail, type StepFailure, type StepProgress } from "../step.js"

/** A backup's name: the config file's, then this marker and a UTC time stamp. */
export const BACKUP_MARKER = ".blctx-backup-"

/** Said before and after a rewrite: what Codex does to the file, which blctx cannot prevent. */
export const REWRITE_WARNING =
  "Codex rewrites config.toml when it adds or removes an MCP server: comments and formatting are not kept"

const octal = (mode: number) => mode.toString(8).padStart(4, "0")

/** What a rewrite left: the backup of the original (when there was one) and whether the mode had to be put back. */
export interface ConfigRewrite {
  readonly backup: Option.Option<string>
  readonly modeRestored: Option.Option<number>
}

/** One sentence for a step's detail: where the original is, and the mode put back. */
export const describeRewrite = (rewrite: ConfigRewrite): string =>
  Option.match(rewrite.backup, {
    onNone: () => "",
    onSome: (backup) =>
      `; ${REWRITE_WARNING}, so the original is kept at ${backup}${Option.match(rewrite.modeRestored, {
        onNone: () => "",
        onSome: (mode) => ` and its mode ${octal(mode)} was put back`
      })}`
  })

const stampOf = (now: DateTime.Utc) =>
  DateTime.formatIso(now)
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z")

/**
 * Runs a `codex mcp add/remove`, which rewrites `configFile` in full (Codex serialises its own
 * model of the file: a person's comments go, and the file comes back 0600). Before it, the exact
 * bytes are copied to `config.toml.blctx-backup-<UTC time>` beside it, with the original's mode,
 * and the step's progress says so; after it, a changed mode is put back. The backup is the
 * person's: nothing of blctx ever removes it. A missing file needs no backup; a file that cannot
 * be read or copied stops the rewrite, so nothing is lost.
 */
export const preservingCodexConfig =
  (fs: Context.Tag.Service<SafeFs>, configFile: string, progress: (p: StepProgress) => Effect.Effect<void>) =>
  <A, R>(rewrite: Effect.Effect<A, StepFailure, R>): Effect.Effect<readonly [A, ConfigRewrite], StepFailure, R> =>
    Effect.gen(function* () {
      const couldNot = (what: string) => (e: { readonly message: string }) =>
        fail(
          `could not ${what} before Codex rewrites it (${e.message}); nothing was changed`,
          `Check ${configFile} and its folder, then run the command again.`
        )
      const before = yield* fs.lstat(configFile).pipe(Effect.mapError(couldNot(`check ${configFile}`)))
      const original = Option.filter(before, (e: StatEntry) => e.kind === "file")
      if (Option.isNone(original)) {
        const result = yield* rewrite
        return [result, { backup: Option.none(), modeRestored: Option.none() }] as const
      }
      const mode = original.value.mode & 0o777
      const bytes = yield* fs
        .readOpened(configFile, () => Effect.void)
        .pipe(Effect.mapError(couldNot(`read ${configFile}`)))
      const backup = yield* freeBackupName(fs, configFile, yield* DateTime.now)
      yield* progress({ label: `${REWRITE_WARNING}; original kept at ${backup}` })
      yield* fs.writeAtomic(backup, bytes, mode).pipe(Effect.mapError(couldNot(`back up ${configFile} to ${backup}`)))
      const result = yield* rewrite
      const modeRestored = yield* restoreMode(fs, configFile, mode)
      return [result, { backup: Option.some(backup), modeRestored }] as const
    })

/** `config.toml.blctx-backup-<stamp>`, or with `-2`, `-3`... when two rewrites share a second. */
const freeBackupName = (fs: Context.Tag.Service<SafeFs>, configFile: string, now: DateTime.Utc) =>
  Effect.gen(function* () {
    const base = `${configFile}${BACKUP_MARKER}${stampOf(now)}`
    for (let n = 1; ; n++) {
      const name = n === 1 ? base : `${base}-${n}`
      if (!(yield* fs.exists(name))) return name
    }
  })

/** Puts the original mode back on the rewritten file (rewritten atomically, as Codex left it, with that mode). */
const restoreMode = (fs: Context.Tag.Service<SafeFs>, configFile: string, mode: number) =>
  Effect.gen(function* () {
    const after = yield* fs.lstat(configFile).pipe(Effect.orElseSucceed(() => Option.none<StatEntry>()))
    if (Option.isNone(after) || after.value.kind !== "file" || (after.value.mode & 0o777) === mode) {
      return Option.none<number>()
    }
    const couldNot = (e: { readonly message: string }) =>
      fail(
        `Codex left ${configFile} with mode ${octal(after.value.mode & 0o777)} and blctx could not put ${octal(mode)} back (${e.message})`,
        `Run: chmod ${octal(mode).slice(1)} ${configFile}`
      )
    const rewritten = yield* fs.readOpened(configFile, () => Effect.void).pipe(Effect.mapError(couldNot))
    yield* fs.writeAtomic(configFile, rewritten, mode).pipe(Effect.mapError(couldNot))
    return Option.some(mode)
  })

/** The backups blctx made of a Codex home's config.toml, for uninstall to name (it never removes them). */
export const backupsOf = (fs: Context.Tag.Service<SafeFs>, configFile: string) =>
  fs.readDirectory(NodePath.dirname(configFile)).pipe(
    Effect.map((names) =>
      names
        .filter((n) => n.startsWith(`${NodePath.basename(configFile)}${BACKUP_MARKER}`))
        .sort()
        .map((n) => NodePath.join(NodePath.dirname(configFile), n))
    ),
    Effect.orElseSucceed((): ReadonlyArray<string> => [])
  )
