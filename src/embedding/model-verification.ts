import * as NodePath from "node:path"
import { Effect, Either, Option, Schema } from "effect"
import { type ModelSpec, SanityCheck } from "../domain/model-spec.js"
import { readVerified } from "../fs/read-verified.js"
import { type Entry, type FsError, SafeFs } from "../fs/safe-fs.js"
import { Digest } from "./file-digest.js"
import type { ModelFingerprint } from "./fingerprint.js"

/**
 * The record of the embedding_model step's checks, kept in the model folder it is about
 * (0600, written atomically, owned through the manifest). The daemon uses a model only when
 * this record says every check passed for the folder's fingerprint, the configured sanity check
 * and the files as they are now (size and modification time, compared without reading them).
 */
export const VERIFICATION_FILE_NAME = ".blctx-verification.json"
export const VERIFICATION_VERSION = 1

export const verificationPath = (folder: string) => NodePath.join(folder, VERIFICATION_FILE_NAME)

/** One checked file: its name, its pinned digest, and the modification time it had when checked. */
export const CheckedFile = Schema.Struct({ name: Schema.String, ...Digest.fields, mtime_ms: Schema.Number })
export type CheckedFile = typeof CheckedFile.Type

export const VerificationPassed = Schema.TaggedStruct("passed", {
  /** The passage the sanity check ranked first, and its cosine similarity with the query. */
  first: Schema.Int,
  score: Schema.Number
})

export const VerificationFailed = Schema.TaggedStruct("failed", {
  /** What failed, in words a person can act on. */
  failure: Schema.String
})

export class ModelVerification extends Schema.Class<ModelVerification>("ModelVerification")({
  version: Schema.Literal(VERIFICATION_VERSION),
  /** The fingerprint key the checks were run for (it also names the folder). */
  fingerprint: Schema.String,
  model: Schema.String,
  checked_at: Schema.String,
  /** The files whose size and SHA-256 were checked; empty when the checks stopped before that. */
  files: Schema.Array(CheckedFile),
  /** The sanity check that was run (the configuration may change it later). */
  sanity: SanityCheck,
  result: Schema.Union(VerificationPassed, VerificationFailed)
}) {}

const decodeRecord = Schema.decodeUnknownEither(Schema.parseJson(ModelVerification))
const encodeRecord = Schema.encodeSync(ModelVerification)

/** The record as JSON text, one field per line. */
export const verificationText = (record: ModelVerification) => `${JSON.stringify(encodeRecord(record), null, 2)}\n`

/** What is at the record's path: nothing, a record, or something that is not one (and why). */
export type StoredVerification =
  | { readonly _tag: "absent" }
  | { readonly _tag: "invalid"; readonly reason: string }
  | { readonly _tag: "present"; readonly record: ModelVerification }

/** Reads the record of `folder` without following a symbolic link. */
export const readVerification = (fs: SafeFs["Type"], folder: string): Effect.Effect<StoredVerification, FsError> =>
  Effect.gen(function* () {
    const path = verificationPath(folder)
    const entry = yield* fs.lstat(path)
    if (Option.isNone(entry)) return { _tag: "absent" } as const
    if (entry.value.kind !== "file") return { _tag: "invalid", reason: `${path} is not a regular file` } as const
    // Read through the descriptor of the file just checked: a link swapped in since is refused.
    const text = yield* readVerified(path, entry.value).pipe(
      Effect.provideService(SafeFs, fs),
      Effect.map(Either.right),
      Effect.catchTag("PathSwapped", (e) => Effect.succeed(Either.left(e.message)))
    )
    if (Either.isLeft(text)) return { _tag: "invalid", reason: text.left } as const
    const decoded = decodeRecord(text.right)
    return Either.match(decoded, {
      onLeft: () => ({ _tag: "invalid", reason: `${path} is not a verification record this blctx reads` }) as const,
      onRight: (record) => ({ _tag: "present", record }) as const
    })
  })

const sameSanity = (recorded: SanityCheck, spec: ModelSpec) =>
  recorded.query === spec.sanity.query &&
  recorded.expected_first === spec.sanity.expected_first &&
  recorded.passages.length === spec.sanity.passages.length &&
  recorded.passages.every((p, i) => p === spec.sanity.passages[i])

/**
 * Why `stored` does not let the model in `folder` be used, or none when it does: it must exist,
 * be for this fingerprint and this sanity check, say "passed", list exactly the spec's files, and
 * every file must still have the size and modification time it had when it was checked.
 * `entries` are the `lstat`s of the spec's files, in spec order. Pure, so every rule is unit-tested.
 */
export const verificationProblem = (
  stored: StoredVerification,
  spec: ModelSpec,
  fingerprint: ModelFingerprint,
  folder: string,
  entries: ReadonlyArray<Option.Option<Entry>>
): Option.Option<string> => {
  const path = verificationPath(folder)
  if (stored._tag === "absent") return Option.some(`no check of ${folder} is recorded`)
  if (stored._tag === "invalid") return Option.some(stored.reason)
  const record = stored.record
  if (record.fingerprint !== fingerprint.key) {
    return Option.some(`${path} records fingerprint ${record.fingerprint}, not ${fingerprint.key}`)
  }
  if (!sameSanity(record.sanity, spec)) {
    return Option.some(`the sanity check in the configuration changed after ${folder} was checked`)
  }
  if (record.result._tag === "failed") return Option.some(record.result.failure)
  const checked = new Map(record.files.map((f) => [f.name, f]))
  if (checked.size !== spec.files.length) {
    return Option.some(`${path} does not list exactly the files of the model`)
  }
  for (const [i, file] of spec.files.entries()) {
    const seen = checked.get(file.name)
    if (seen === undefined || seen.size !== file.size || seen.sha256 !== file.sha256) {
      return Option.some(`${file.name} was not checked against its pin`)
    }
    const entry = entries[i] ?? Option.none()
    if (Option.isNone(entry) || entry.value.size !== seen.size || entry.value.mtimeMs !== seen.mtime_ms) {
      return Option.some(`${NodePath.join(folder, file.name)} changed after it was checked`)
    }
  }
  return Option.none()
}
