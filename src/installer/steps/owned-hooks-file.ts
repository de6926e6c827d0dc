import { Effect, Either, Option } from "effect"
import {
  type HookEntry,
  type HooksDocument,
  hasEntry,
  type ModifiedEntry,
  modifiedEntries,
  parseHooksDocument,
  removeEntries,
  renderHooksDocument
} from "../../codex/hooks-file.js"
import { readVerified } from "../../fs/read-verified.js"
import { SafeFs, type StatEntry } from "../../fs/safe-fs.js"
import { writeReplacing } from "../../fs/write-replacing.js"
import { fail, type StepFailure } from "../step.js"
import { checkAgentHomePath } from "./agent-home-ownership.js"

/** A hooks registration blctx recorded: the entries it wrote into one file. */
export interface HooksRecord {
  readonly entries: ReadonlyArray<HookEntry>
}

export interface OwnedHooksFileOptions {
  /** The file's name as people know it (`hooks.json`, `settings.json`). */
  readonly fileName: string
  /** The agent that reads it (`Codex`, `Claude Code`). */
  readonly agent: string
  /** What the agent does with a file it cannot parse, said in the remediation. */
  readonly unparsable: string
  /** The command that writes blctx's hooks again. */
  readonly reinstall: string
  /** The command that removes them (`blctx uninstall codex`). */
  readonly uninstall: string
}

/** A regular file as `readOwned` found it: its document and what it was on disk. */
interface OwnedFile {
  readonly doc: HooksDocument
  readonly entry: StatEntry
}

/** The kind of file at `path`: none when absent; a link or anything but a regular file is refused. */
const inspect = (fs: SafeFs["Type"], { fileName }: OwnedHooksFileOptions, path: string, next: string) =>
  Effect.gen(function* () {
    const entry = yield* fs
      .lstat(path)
      .pipe(Effect.mapError((e) => fail(`could not inspect ${path}: ${e.message}`, `Check it, then run: ${next}`)))
    if (Option.isNone(entry)) return entry
    if (entry.value.kind === "symlink") {
      return yield* fail(
        `${path} is a symbolic link; blctx edits ${fileName} only as a regular file, so nothing was changed`,
        `Replace the link with the file it points to (cp --remove-destination "$(readlink -f ${path})" ${path}), then run: ${next}`
      )
    }
    if (entry.value.kind !== "file") {
      return yield* fail(
        `${path} is a ${entry.value.kind}, not a file; nothing was changed`,
        `Move it away, then run: ${next}`
      )
    }
    return entry
  })

/** The document in the file checked as `entry`, read through a descriptor of it, never by its path again. */
const parseChecked = (
  fs: SafeFs["Type"],
  { fileName, agent, unparsable }: OwnedHooksFileOptions,
  path: string,
  entry: StatEntry,
  next: string
) =>
  Effect.gen(function* () {
    const text = yield* readVerified(path, entry).pipe(
      Effect.provideService(SafeFs, fs),
      Effect.mapError((e) =>
        e._tag === "PathSwapped"
          ? fail(e.message, `Find out what replaced ${path}, then run: ${next}`)
          : fail(`could not read ${path}: ${e.message}`, `Check it, then run: ${next}`)
      )
    )
    const parsed = parseHooksDocument(text, agent)
    if (Either.isLeft(parsed)) {
      return yield* fail(
        `${path} is not a ${fileName === "hooks.json" ? "hooks" : "settings"} file ${agent} can read: ${parsed.left}; nothing was changed`,
        `Fix it (${unparsable}), then run: ${next}`
      )
    }
    return parsed.right
  })

/**
 * The file as it is now: none when absent; a file on a way another user could change (a folder
 * or link of theirs, see checkAgentHomePath), a link, another kind of file or malformed JSON is
 * refused.
 */
const readOwned = (fs: SafeFs["Type"], options: OwnedHooksFileOptions, path: string, next: string) =>
  Effect.gen(function* () {
    yield* checkAgentHomePath(fs, path, options.agent, next)
    const entry = yield* inspect(fs, options, path, next)
    if (Option.isNone(entry)) return Option.none<OwnedFile>()
    const doc = yield* parseChecked(fs, options, path, entry.value, next)
    return Option.some<OwnedFile>({ doc, entry: entry.value })
  })

/**
 * Writes the file `read` returned as `checked` (none: it was absent), keeping its mode (0600
 * when blctx creates it); refused when the path no longer holds what was read.
 */
const writeOwned = (
  fs: SafeFs["Type"],
  { agent, reinstall }: OwnedHooksFileOptions,
  path: string,
  doc: HooksDocument,
  checked: Option.Option<StatEntry>
) =>
  checkAgentHomePath(fs, path, agent, reinstall).pipe(
    Effect.zipRight(
      writeReplacing(
        path,
        renderHooksDocument(doc),
        Option.match(checked, { onNone: () => 0o600, onSome: (e) => e.mode }),
        checked
      ).pipe(
        Effect.provideService(SafeFs, fs),
        Effect.mapError((e) =>
          e._tag === "PathSwapped"
            ? fail(e.message, `Find out what replaced ${path}, then run: ${reinstall}`)
            : fail(`could not write ${path}: ${e.message}`, `Check the folder, then run: ${reinstall}`)
        )
      )
    )
  )

/** blctx's entries that someone changed after blctx wrote them: reported, never overwritten. */
const modifiedFailure = (
  { reinstall }: OwnedHooksFileOptions,
  path: string,
  modified: ReadonlyArray<ModifiedEntry>,
  record: HooksRecord
) =>
  fail(
    `${modified
      .map((x) => {
        const wrote = record.entries.find((e) => e.event === x.event)
        return `blctx's ${x.event} hook in ${path} was changed after blctx wrote it (it now runs ${x.command}${wrote === undefined ? "" : `; blctx wrote ${wrote.command}`})`
      })
      .join("; ")}; ${modified.length === 1 ? "it was" : "they were"} left untouched`,
    `To let blctx write its hooks again, delete ${modified.length === 1 ? "that handler" : "those handlers"} from ${path}, then run: ${reinstall}. To keep your version, leave it: blctx will not change it.`
  )

/**
 * What removing one record's entries did to its file: `removed` them, found them `gone`, or
 * neither (the file could not be read or written); a problem keeps the record in the manifest.
 */
interface Removal {
  readonly file?: "removed" | "gone"
  readonly problem?: StepFailure
}

/** Removes blctx's entries of one record from its file, and says what stays: an entry someone changed. */
const removeFromFile = (
  fs: SafeFs["Type"],
  options: OwnedHooksFileOptions,
  record: HooksRecord,
  file: string,
  installationId: string
) =>
  Effect.gen(function* () {
    const next = `${options.uninstall}, or delete blctx's handlers from ${file} yourself`
    const existing = yield* Effect.either(readOwned(fs, options, file, next))
    if (Either.isLeft(existing)) return { problem: existing.left } satisfies Removal
    if (Option.isNone(existing.right)) return { file: "gone" } satisfies Removal
    const { doc, entry } = existing.right.value
    let done: Removal["file"] = "gone"
    if (record.entries.some((e) => hasEntry(doc, e))) {
      const written = yield* Effect.either(
        writeOwned(fs, options, file, removeEntries(doc, record.entries), Option.some(entry))
      )
      if (Either.isLeft(written)) return { problem: written.left } satisfies Removal
      done = "removed"
    }
    const modified = modifiedEntries(doc, record.entries, installationId)
    if (modified.length === 0) return { file: done } satisfies Removal
    const problem = fail(
      modifiedFailure(options, file, modified, record).detail,
      `If you no longer need ${modified.length === 1 ? "it" : "them"}, delete ${modified.length === 1 ? "that handler" : "those handlers"} from ${file} yourself`
    )
    return { file: done, problem } satisfies Removal
  })

/** The outcome of a removal: every problem in one failure, else where the hooks were removed or already gone. */
const removalReport = (
  removed: ReadonlyArray<string>,
  gone: ReadonlyArray<string>,
  problems: ReadonlyArray<StepFailure>
) =>
  Effect.suspend(() => {
    const alreadyGone = gone.length > 0 ? `; already gone from ${gone.join(", ")}` : ""
    if (problems.length > 0) {
      const done = removed.length > 0 ? `removed blctx's hooks from ${removed.join(", ")}; ` : ""
      return Effect.fail(
        fail(
          `${done}${problems.map((p) => p.detail).join("; ")}`,
          problems.map((p) => p.remediation).join("; "),
          problems[0]?.errorTag
        )
      )
    }
    if (removed.length === 0) {
      return Effect.succeed({ detail: `nothing to remove: blctx's hooks were already gone from ${gone.join(", ")}` })
    }
    return Effect.succeed({ detail: `removed blctx's hooks from ${removed.join(", ")}${alreadyGone}` })
  })

/**
 * Removes blctx's entries of every record from its file. Returns the records that must stay in
 * the manifest (their file could not be read or written, or holds an entry someone changed), and
 * the outcome to report.
 */
const removeRecorded = <R extends HooksRecord>(
  fs: SafeFs["Type"],
  options: OwnedHooksFileOptions,
  records: ReadonlyArray<R>,
  fileOf: (record: R) => string,
  installationId: string
) =>
  Effect.gen(function* () {
    const kept: Array<R> = []
    const removed: Array<string> = []
    const gone: Array<string> = []
    const problems: Array<StepFailure> = []
    for (const record of records) {
      const file = fileOf(record)
      const removal: Removal = yield* removeFromFile(fs, options, record, file, installationId)
      if (removal.file !== undefined) (removal.file === "removed" ? removed : gone).push(file)
      if (removal.problem !== undefined) {
        kept.push(record)
        problems.push(removal.problem)
      }
    }
    return { kept, report: removalReport(removed, gone, problems) } as const
  })

/**
 * A hooks file shared with the person (Codex's hooks.json, Claude Code's settings.json), as the
 * hooks steps read, write and clean it: only a regular file is edited, every write is atomic and
 * keeps the file's mode, and blctx's entries are removed only where they are still exactly what
 * blctx wrote. Everything else in the file is the person's and stays.
 */
export const makeOwnedHooksFile = (fs: SafeFs["Type"], options: OwnedHooksFileOptions) =>
  ({
    read: (path: string, next: string) => readOwned(fs, options, path, next),
    write: (path: string, doc: HooksDocument, checked: Option.Option<StatEntry>) =>
      writeOwned(fs, options, path, doc, checked),
    modifiedFailure: (path: string, modified: ReadonlyArray<ModifiedEntry>, record: HooksRecord) =>
      modifiedFailure(options, path, modified, record),
    removeRecorded: <R extends HooksRecord>(
      records: ReadonlyArray<R>,
      fileOf: (record: R) => string,
      installationId: string
    ) => removeRecorded(fs, options, records, fileOf, installationId)
  }) as const
