import * as NodePath from "node:path"
import type { SqlClient } from "@effect/sql"
import { Clock, Effect, Either, Option } from "effect"
import * as v from "valibot"
import { readVerified } from "../fs/read-verified.js"
import { type FsError, SafeFs } from "../fs/safe-fs.js"
import type { StoreError } from "../store/store-error.js"
import type { CaptureStore } from "./capture-drain-store.js"
import { type CaptureAgent, CaptureRecord } from "./capture-record.js"
import { isSpoolTempName, SPOOL_RECORD_PATTERN } from "./spool-writer.js"

/**
 * Draining the spool: each final file the hook handler renamed into place is one hook event. A
 * good one is recorded (binding and event, one transaction) and then deleted; a bad one is
 * recorded as a rejection with its reason and deleted too. Deleting only after the commit, with
 * the event keyed by the file's name, makes a crash between the two harmless: the next pass finds
 * the file again, records nothing new, and deletes it.
 *
 * Refused files are deleted rather than kept aside: a capture carries no conversation text (the
 * transcript holds it), the reason is in the database for status and doctor, and a folder of
 * refused files would need its own cleanup and ownership.
 */

/** A temp file older than this is what a handler killed mid-write left behind: removed. */
export const SPOOL_TEMP_MAX_AGE_MS = 5 * 60 * 1000
/** A capture is a few hundred bytes; a file larger than this is refused unread. */
export const MAX_SPOOL_FILE_BYTES = 64 * 1024

/**
 * What the drain accepts: records of this installation, from a hook generation the manifest
 * registers, for the agent that registration is for (a generation of `claude_hooks` captures
 * only `claude` records).
 */
export interface DrainExpectations {
  readonly installationId: string
  readonly generations: ReadonlyMap<string, CaptureAgent>
}

/** What the name of an entry of the spool says it is. */
export const spoolEntryKind = (name: string): "record" | "temp" | "other" =>
  isSpoolTempName(name) ? "temp" : SPOOL_RECORD_PATTERN.test(name) ? "record" : "other"

/** Record names in arrival order (their leading milliseconds), then by name. */
export const inArrivalOrder = (names: ReadonlyArray<string>): ReadonlyArray<string> =>
  [...names].sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10) || (a < b ? -1 : a > b ? 1 : 0))

const MAX_REASON_CHARS = 300

const issueOf = (issues: ReadonlyArray<v.BaseIssue<unknown>>): string => {
  const first = issues[0]
  if (first === undefined) return "unknown problem"
  const path = (first.path ?? []).map((p) => String(p.key)).join(".")
  return `${path === "" ? "" : `${path}: `}${first.message}`.slice(0, MAX_REASON_CHARS)
}

/** A spool file's text judged: the record, or why it is refused. */
export const judgeCapture = (text: string, expected: DrainExpectations): Either.Either<CaptureRecord, string> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return Either.left("not valid JSON")
  }
  const parsed = v.safeParse(CaptureRecord, json)
  if (!parsed.success) return Either.left(`not a capture record (${issueOf(parsed.issues)})`)
  const record = parsed.output
  if (record.installation_id !== expected.installationId) {
    return Either.left(`written for installation ${record.installation_id}, not this one`)
  }
  const agent = expected.generations.get(record.generation)
  if (agent === undefined) {
    return Either.left(`hook generation ${record.generation} is not registered now (a stale hook)`)
  }
  if (agent !== record.agent) {
    return Either.left(`hook generation ${record.generation} is registered for ${agent}, not ${record.agent}`)
  }
  return Either.right(record)
}

/** What one pass did. `kept`: files left for the next pass (unreadable now). */
export interface DrainOutcome {
  readonly recorded: number
  readonly duplicates: number
  readonly rejected: number
  readonly tempRemoved: number
  readonly kept: number
}

const missing = (e: FsError) => e.code === "ENOENT"

/**
 * One pass over the spool. `expectations` is asked only when there are records to judge (it
 * reads the manifest). A database failure ends the pass with the file still in place; a file
 * that cannot be read now (not a refusal) is kept and tried again at the next pass.
 */
export const drainSpool = <E>(
  spoolDir: string,
  store: CaptureStore,
  expectations: Effect.Effect<DrainExpectations, E>
): Effect.Effect<DrainOutcome, StoreError | FsError | E, SafeFs | SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const outcome = { recorded: 0, duplicates: 0, rejected: 0, tempRemoved: 0, kept: 0 }
    const names = yield* fs
      .readDirectory(spoolDir)
      .pipe(Effect.catchIf(missing, () => Effect.succeed([] as ReadonlyArray<string>)))
    const now = yield* Clock.currentTimeMillis
    for (const name of names.filter((n) => spoolEntryKind(n) === "temp")) {
      const path = NodePath.join(spoolDir, name)
      const entry = yield* fs.lstat(path).pipe(Effect.orElseSucceed(() => Option.none()))
      if (Option.isSome(entry) && entry.value.kind === "file" && now - entry.value.mtimeMs > SPOOL_TEMP_MAX_AGE_MS) {
        yield* fs.removeFile(path)
        outcome.tempRemoved++
      }
    }
    const records = inArrivalOrder(names.filter((n) => spoolEntryKind(n) === "record"))
    if (records.length === 0) return outcome
    const expected = yield* expectations

    for (const name of records) {
      const path = NodePath.join(spoolDir, name)
      const entry = yield* fs.lstat(path)
      if (Option.isNone(entry)) continue
      let judged: Either.Either<CaptureRecord, string>
      if (entry.value.kind !== "file") {
        judged = Either.left(`is a ${entry.value.kind}, not a regular file`)
      } else if (entry.value.size > MAX_SPOOL_FILE_BYTES) {
        judged = Either.left(`is ${entry.value.size} bytes, larger than any capture (${MAX_SPOOL_FILE_BYTES})`)
      } else {
        // Through a descriptor of the file just checked: a link swapped in since is never read.
        const text = yield* Effect.either(readVerified(path, entry.value).pipe(Effect.provideService(SafeFs, fs)))
        if (Either.isLeft(text)) {
          const gone = text.left._tag === "PathSwapped" ? text.left.swap === "removed" : missing(text.left)
          if (gone) continue
          yield* Effect.logWarning("capture file could not be read; kept for the next pass").pipe(
            Effect.annotateLogs({ file: path, reason: text.left.message })
          )
          outcome.kept++
          continue
        }
        judged = judgeCapture(text.right, expected)
      }
      if (Either.isRight(judged)) {
        const recorded = yield* store.recordCapture(name, judged.right)
        if (recorded) outcome.recorded++
        else outcome.duplicates++
      } else {
        if (yield* store.recordRejection(name, judged.left)) {
          yield* Effect.logWarning("capture refused").pipe(Effect.annotateLogs({ file: name, reason: judged.left }))
          outcome.rejected++
        }
      }
      // Only after the commit: a crash before this leaves a file whose event is already recorded.
      yield* entry.value.kind === "directory" ? Effect.void : fs.removeFile(path)
    }
    return outcome
  })
