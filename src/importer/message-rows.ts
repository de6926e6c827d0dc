import { createHash } from "node:crypto"
import { redactNullable, redactSecrets } from "../redaction/redact.js"
import type { MessageKind, TranscriptSummary } from "../transcripts/classification.js"

/** One message ready to store: redacted text, provenance, and its place in the session. */
export interface MessageRow {
  readonly turn_number: number
  readonly turn_id: string | null
  readonly role: string
  readonly kind: MessageKind
  readonly phase: string | null
  readonly text: string
  readonly text_sha256: string
  readonly redactions: number
  readonly timestamp: string | null
  readonly line: number
  readonly byte_start: number
  readonly byte_end: number
}

export const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

type ClassifiedTurn = TranscriptSummary["turns"][number]

/** Message rows built a turn at a time, so a caller can let other work run between turns. */
export interface MessageRowBuilder {
  /** Adds the rows of one turn; returns how many characters of text it redacted (the work done). */
  readonly add: (turn: ClassifiedTurn) => number
  /** The rows in file order, and the redaction counts. */
  readonly finish: () => {
    readonly rows: ReadonlyArray<MessageRow>
    readonly redactions: number
    readonly metadataRedactions: number
  }
}

/**
 * The messages the shared classifier selected, as rows. `turnBase` places a classification of
 * the tail of a file (an append) after the turns already stored: its turn 0 and 1 continue
 * turn `turnBase`. Every string that comes from the transcript is redacted: the text (counted per
 * message in `redactions`) and the turn id, role, phase and time (counted in `metadataRedactions`).
 */
export const messageRowBuilder = (turnBase: number): MessageRowBuilder => {
  const rows: Array<MessageRow> = []
  let redactions = 0
  let metadataRedactions = 0
  const field = (value: string | null) => {
    const redacted = redactNullable(value)
    metadataRedactions += redacted.total
    return redacted.text
  }
  const add = (turn: ClassifiedTurn) => {
    let characters = 0
    const turnNumber = turnBase === 0 ? turn.number : turnBase + Math.max(0, turn.number - 1)
    const turnId = field(turn.turn_id)
    for (const message of turn.messages) {
      const redacted = redactSecrets(message.text)
      redactions += redacted.total
      characters += message.text.length
      rows.push({
        turn_number: turnNumber,
        turn_id: turnId,
        role: field(message.role) ?? message.role,
        kind: message.kind,
        phase: field(message.phase),
        text: redacted.text,
        text_sha256: sha256(redacted.text),
        redactions: redacted.total,
        timestamp: field(message.timestamp),
        line: message.source.line,
        byte_start: message.source.byte_start,
        byte_end: message.source.byte_end
      })
    }
    return characters
  }
  const finish = () => {
    rows.sort((a, b) => a.byte_start - b.byte_start)
    return { rows, redactions, metadataRedactions }
  }
  return { add, finish }
}

/**
 * Where the next append should start reading: the first line of the last turn, whose messages
 * may still gain duplicates or answers. `null` when the classification has no turn.
 */
export const resumePoint = (
  classification: TranscriptSummary,
  turnBase: number
): { readonly byte: number; readonly line: number; readonly turn: number } | null => {
  const last = classification.turns.filter((t) => t.number > 0).at(-1)
  if (last === undefined) return null
  const turn = turnBase === 0 ? last.number : turnBase + Math.max(0, last.number - 1)
  return { byte: last.first_byte, line: last.first_line, turn }
}
