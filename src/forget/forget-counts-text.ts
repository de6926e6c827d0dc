import type { SourceCounts } from "./forget-contract.js"

/** `1 message`, `2 messages`: how a forget preview counts. */
export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`

/**
 * What forgetting removes of one source, in words, the same for `blctx forget` and the viewer:
 * messages, chunks and vectors always; notes, sessions and files when there are any.
 */
export const sourceCountParts = (n: SourceCounts): Array<string> => [
  plural(n.messages, "message"),
  plural(n.chunks, "chunk"),
  plural(n.vectors, "vector"),
  ...(n.notes > 0 ? [`${plural(n.notes, "note")} (${plural(n.note_revisions, "revision")})`] : []),
  ...(n.sessions > 0 ? [plural(n.sessions, "session")] : []),
  ...(n.files > 0 ? [plural(n.files, "file")] : [])
]
