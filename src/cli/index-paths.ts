import { Data, Effect, Option } from "effect"
import { SafeFs } from "../fs/safe-fs.js"
import { sanitizeForTerminal } from "../installer/render-text.js"

/** One path `blctx index` will not submit, and why, in words for the person who gave it. */
export interface RefusedPath {
  readonly path: string
  readonly problem: string
}

/** Paths given to `blctx index` that are not transcript files: nothing was submitted (exit 1). */
export class UnindexablePaths extends Data.TaggedError("UnindexablePaths")<{
  readonly paths: ReadonlyArray<RefusedPath>
  readonly message: string
}> {}

const problemOf = (kind: string): string | undefined => {
  switch (kind) {
    case "file":
      return undefined
    case "directory":
      return "is a directory (give transcript files, or --root for a whole Codex home)"
    case "symlink":
      return "is a symbolic link, which blctx never follows (give the file it points to)"
    default:
      return "is not a regular file"
  }
}

/**
 * Every path must be an existing regular file, judged with lstat (a symbolic link is refused,
 * never followed). All paths are checked, and one refusal fails them all: nothing is half-done.
 */
export const checkTranscriptPaths = (paths: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const refused: Array<RefusedPath> = []
    for (const path of paths) {
      const problem = yield* fs.lstat(path).pipe(
        Effect.map((entry) => (Option.isNone(entry) ? "does not exist" : problemOf(entry.value.kind))),
        Effect.catchAll((e) => Effect.succeed(`cannot be examined (${e.code})`))
      )
      if (problem !== undefined) refused.push({ path, problem })
    }
    if (refused.length === 0) return
    const listed = refused.map((r) => `${sanitizeForTerminal(r.path)} ${r.problem}`).join("; ")
    return yield* new UnindexablePaths({ paths: refused, message: `nothing submitted for indexing: ${listed}` })
  })
