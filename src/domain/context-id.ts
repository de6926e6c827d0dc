/**
 * The ids `context` answers, declared once. A search hit is a passage of a message:
 * `m<message id>@<char_start>-<char_end>`, from what re-chunking never changes (the message row
 * and the passage's characters within its text), so an id an agent wrote down keeps naming the
 * same text after the chunks are cut again (a model install re-chunks for its tokenizer). A whole
 * message is `m<message id>`. `c<chunk id>`, what search answered before, still resolves while
 * that chunk row exists (until its message is re-chunked): chunk rows come and go, so no new
 * answer carries one.
 */
export type ContextAnchor =
  | { readonly kind: "message"; readonly message_id: number; readonly range: PassageRange | null }
  | { readonly kind: "chunk"; readonly chunk_id: number }

export interface PassageRange {
  readonly char_start: number
  readonly char_end: number
}

export const messageContextId = (messageId: number) => `m${messageId}`

export const passageContextId = (messageId: number, range: PassageRange) =>
  `m${messageId}@${range.char_start}-${range.char_end}`

const ID = /^(?:c(\d{1,15})|m(\d{1,15})(?:@(\d{1,10})-(\d{1,10}))?)$/

/** The anchor a context id names, or null when it is not one (a passage must not end before it starts). */
export const parseContextId = (id: string): ContextAnchor | null => {
  const parsed = ID.exec(id)
  if (parsed === null) return null
  const [, chunk, message, start, end] = parsed
  if (chunk !== undefined) return { kind: "chunk", chunk_id: Number(chunk) }
  const range = start === undefined || end === undefined ? null : { char_start: Number(start), char_end: Number(end) }
  if (range !== null && range.char_end < range.char_start) return null
  return { kind: "message", message_id: Number(message), range }
}
