/**
 * The one way text from outside reaches a person's terminal. Transcripts, paths, cwd, ids, error
 * details: any of it may hold bytes a terminal obeys (ESC sequences that rewrite the screen or
 * the clipboard, the single-byte CSI 0x9b, BEL) or bidirectional overrides that make text read
 * differently from what it is. Each such character is shown as a visible escape instead.
 */

/** C0 controls but tab and newline, DEL, and the C1 range (0x9b, the one-byte CSI, included). */
const isControl = (code: number) => (code < 0x20 && code !== 0x09 && code !== 0x0a) || (code >= 0x7f && code <= 0x9f)

/** Bidirectional marks, embeddings, overrides and isolates (the "Trojan Source" characters). */
const isBidiControl = (code: number) =>
  code === 0x061c ||
  code === 0x200e ||
  code === 0x200f ||
  (code >= 0x202a && code <= 0x202e) ||
  (code >= 0x2066 && code <= 0x2069)

const isUnsafe = (code: number) => isControl(code) || isBidiControl(code)

/** Escapes terminal controls in one string: `\xNN` for C0/C1, `\u{NNNN}` for bidi controls. */
export const sanitizeForTerminal = (text: string): string => {
  let clean = true
  for (let i = 0; i < text.length && clean; i++) clean = !isUnsafe(text.charCodeAt(i))
  if (clean) return text
  let out = ""
  for (const ch of text) {
    const code = ch.charCodeAt(0)
    if (isControl(code)) out += `\\x${code.toString(16).padStart(2, "0")}`
    else if (isBidiControl(code)) out += `\\u{${code.toString(16)}}`
    else out += ch
  }
  return out
}

/** Every string inside a value (objects, arrays), sanitized; for renderers that show many fields. */
export const sanitizeDeep = <A>(value: A): A => {
  if (typeof value === "string") return sanitizeForTerminal(value) as A
  if (Array.isArray(value)) return value.map(sanitizeDeep) as A
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[k] = sanitizeDeep(v)
    return out as A
  }
  return value
}

/**
 * JSON for a terminal or a pipe: `JSON.stringify` already escapes C0 controls; this also escapes
 * DEL, the C1 range and bidi controls as `\uNNNN`, so the document stays valid JSON with the
 * same value and nothing in it drives the terminal.
 */
export const stringifyForTerminal = (value: unknown, indent: number | undefined = 2): string =>
  JSON.stringify(value, null, indent).replace(
    /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`
  )
