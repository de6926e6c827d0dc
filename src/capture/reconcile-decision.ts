/**
 * Whether a bound transcript needs importing: a pure decision over what lstat says of the path
 * now, what the index holds for it (`source_files`), and the import the reconciler last queued.
 * The file is never followed through a link and never opened here: the importer reads it.
 */

/** The metadata the importer's own "unchanged" test compares (size, mtime, inode). */
export interface FileSignature {
  readonly size: number
  readonly mtime_ms: number
  readonly ino: number
}

/** What lstat says of the transcript path now. */
export type TranscriptLook =
  | { readonly _tag: "File"; readonly signature: FileSignature }
  | { readonly _tag: "Missing" }
  | { readonly _tag: "NotRegular"; readonly kind: string }
  | { readonly _tag: "Unexaminable"; readonly code: string }

export interface ReconcileFacts {
  readonly path: string
  readonly look: TranscriptLook
  /** The index's row for this path: the signature it was imported at, its state and note. */
  readonly indexed:
    | { readonly signature: FileSignature; readonly state: string; readonly note: string | null }
    | undefined
  /** The signature the last queued import was for, and that job's state (undefined: pruned). */
  readonly submitted:
    | {
        readonly signature: FileSignature
        readonly job: { readonly state: string; readonly error: string | null } | undefined
      }
    | undefined
}

export type ReconcileVerdict =
  | { readonly _tag: "Indexed" }
  | { readonly _tag: "Waiting" }
  | { readonly _tag: "Submit"; readonly signature: FileSignature }
  | { readonly _tag: "Error"; readonly reason: string }

export const sameSignature = (a: FileSignature, b: FileSignature) =>
  a.size === b.size && a.mtime_ms === b.mtime_ms && a.ino === b.ino

const ACTIVE = ["queued", "running"]
/** A job that stopped without trying (cancelled, superseded): the file is queued again. */
const NOT_TRIED = ["cancelled", "superseded"]

/**
 * - The path does not exist and was never indexed or queued: waiting for the agent to write it.
 * - The path is gone, a link, not a regular file, or cannot be examined: an error with the reason.
 * - The index holds the file as it is now: indexed (a conflict, another file claiming its
 *   session, is an error).
 * - An import queued for it is still queued or running: waiting.
 * - An import already ran for exactly this content and the index still does not match: an error
 *   (not queued again until the file changes, so a file the importer refuses is not retried forever).
 * - Otherwise: submit an import.
 */
export const reconcileVerdict = (facts: ReconcileFacts): ReconcileVerdict => {
  const { look, indexed, submitted } = facts
  switch (look._tag) {
    case "Missing":
      // Never indexed nor queued: the agent has not written it yet (Claude Code writes a
      // transcript at the first message; a session that never converses, such as `claude mcp
      // list`, never does). That is waiting, not a fault; a file that was there and went is.
      return indexed === undefined && submitted === undefined
        ? { _tag: "Waiting" }
        : { _tag: "Error", reason: `${facts.path} no longer exists` }
    case "Unexaminable":
      return { _tag: "Error", reason: `${facts.path} cannot be examined (${look.code})` }
    case "NotRegular":
      return {
        _tag: "Error",
        reason:
          look.kind === "symlink"
            ? `${facts.path} is a symbolic link, which blctx never follows`
            : `${facts.path} is a ${look.kind}, not a regular file`
      }
    case "File":
      break
  }
  const signature = look.signature
  if (indexed !== undefined && sameSignature(indexed.signature, signature)) {
    return indexed.state === "conflict"
      ? { _tag: "Error", reason: `${facts.path} was not indexed: ${indexed.note ?? "another file claims its session"}` }
      : { _tag: "Indexed" }
  }
  if (submitted !== undefined) {
    const job = submitted.job
    if (job !== undefined && ACTIVE.includes(job.state)) return { _tag: "Waiting" }
    const tried = job === undefined || !NOT_TRIED.includes(job.state)
    if (tried && sameSignature(submitted.signature, signature)) {
      const why = job === undefined ? "its import left it out" : (job.error ?? `its import ended ${job.state}`)
      return { _tag: "Error", reason: `${facts.path} was not indexed: ${why}` }
    }
  }
  return { _tag: "Submit", signature }
}
