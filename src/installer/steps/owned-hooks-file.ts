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

/**
 * A hooks file shared with the person (Codex's hooks.json, Claude Code's settings.json), as the
 * hooks steps read, write and clean it: only a regular file is edited, every write is atomic and
 * keeps the file's mode, and blctx's entries are removed only where they are still exactly what
 * blctx wrote. Everything else in the file is the person's and stays.
 */
export const makeOwnedHooksFile = (fs: SafeFs["Type"], options: OwnedHooksFileOptions) => {
  const { fileName, agent, unparsable, reinstall, uninstall } = options

  /**
   * The file as it is now: none when absent; a file on a way another user could change (a folder
   * or link of theirs, see checkAgentHomePath), a link, another kind of file or malformed JSON is
   * refused.
   */
  const read = (path: string, next: string) =>
    Effect.gen(function* () {
      yield* checkAgentHomePath(fs, path, agent, next)
      const entry = yield* fs
        .lstat(path)
        .pipe(Effect.mapError((e) => fail(`could not inspect ${path}: ${e.message}`, `Check it, then run: ${next}`)))
      if (Option.isNone(entry)) return Option.none<{ doc: HooksDocument; entry: StatEntry }>()
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
      // Read through a descriptor of the file checked above, never by its path again.
      const text = yield* readVerified(path, entry.value).pipe(
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
      return Option.some({ doc: parsed.right, entry: entry.value })
    })

  /**
   * Writes the file `read` returned as `checked` (none: it was absent), keeping its mode (0600
   * when blctx creates it); refused when the path no longer holds what was read.
   */
  const write = (path: string, doc: HooksDocument, checked: Option.Option<StatEntry>) =>
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
  const modifiedFailure = (path: string, modified: ReadonlyArray<ModifiedEntry>, record: HooksRecord) =>
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
   * Removes blctx's entries of every record from its file. Returns the records that must stay in
   * the manifest (their file could not be read or written, or holds an entry someone changed), and
   * the outcome to report.
   */
  const removeRecorded = <R extends HooksRecord>(
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
        const next = `${uninstall}, or delete blctx's handlers from ${file} yourself`
        const existing = yield* Effect.either(read(file, next))
        if (Either.isLeft(existing)) {
          kept.push(record)
          problems.push(existing.left)
          continue
        }
        if (Option.isNone(existing.right)) {
          gone.push(file)
          continue
        }
        const { doc, entry } = existing.right.value
        if (record.entries.some((e) => hasEntry(doc, e))) {
          const written = yield* Effect.either(write(file, removeEntries(doc, record.entries), Option.some(entry)))
          if (Either.isLeft(written)) {
            kept.push(record)
            problems.push(written.left)
            continue
          }
          removed.push(file)
        } else {
          gone.push(file)
        }
        const modified = modifiedEntries(doc, record.entries, installationId)
        if (modified.length > 0) {
          kept.push(record)
          problems.push(
            fail(
              modifiedFailure(file, modified, record).detail,
              `If you no longer need ${modified.length === 1 ? "it" : "them"}, delete ${modified.length === 1 ? "that handler" : "those handlers"} from ${file} yourself`
            )
          )
        }
      }
      const report = Effect.suspend(() => {
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
          return Effect.succeed({
            detail: `nothing to remove: blctx's hooks were already gone from ${gone.join(", ")}`
          })
        }
        return Effect.succeed({ detail: `removed blctx's hooks from ${removed.join(", ")}${alreadyGone}` })
      })
      return { kept, report } as const
    })

  return { read, write, modifiedFailure, removeRecorded } as const
}
