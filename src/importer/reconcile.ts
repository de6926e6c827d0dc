import type { StoredMessage } from "./history-rows.js"
import type { MessageRow } from "./message-rows.js"

/** A kept message that moves: its row, chunks and vectors stay, with the new positions of `row`. */
export interface Relocation {
  readonly id: number
  readonly row: MessageRow
}

/** What a re-read file changes in its stored messages. */
export interface Reconciliation {
  /** Stored messages that stay (some of them relocated). */
  readonly keep: ReadonlySet<number>
  readonly relocate: ReadonlyArray<Relocation>
  /** Messages new to the index, in file order. */
  readonly insert: ReadonlyArray<MessageRow>
  /** Stored messages that go. */
  readonly remove: ReadonlyArray<number>
}

/** Rows from the stored ones, by text hash, so a rewritten file's reconciliation is linear. */
const byText = (existing: ReadonlyArray<StoredMessage>) => {
  const map = new Map<string, Array<StoredMessage>>()
  for (const m of existing) {
    const list = map.get(m.text_sha256) ?? []
    list.push(m)
    map.set(m.text_sha256, list)
  }
  return map
}

/**
 * Reconciles the rows read with the stored ones: the same text at the same place is kept as is;
 * the same text that moved (the file was rewritten) keeps its row, chunks and vectors with new
 * positions; the rest is inserted or removed.
 */
export const reconcile = (rows: ReadonlyArray<MessageRow>, existing: ReadonlyArray<StoredMessage>): Reconciliation => {
  const existingByStart = new Map(existing.map((m) => [m.byte_start, m]))
  const keep = new Set<number>()
  const relocate: Array<Relocation> = []
  const unmatched: Array<MessageRow> = []
  for (const row of rows) {
    const old = existingByStart.get(row.byte_start)
    if (old !== undefined && old.text_sha256 === row.text_sha256) {
      keep.add(old.id)
      if (old.turn_number !== row.turn_number || old.turn_id !== row.turn_id) relocate.push({ id: old.id, row })
    } else unmatched.push(row)
  }
  const existingByText = byText(existing)
  const insert: Array<MessageRow> = []
  for (const row of unmatched) {
    const old = existingByText.get(row.text_sha256)?.find((m) => !keep.has(m.id))
    if (old === undefined) insert.push(row)
    else {
      keep.add(old.id)
      relocate.push({ id: old.id, row })
    }
  }
  const remove = existing.filter((m) => !keep.has(m.id)).map((m) => m.id)
  return { keep, relocate, insert, remove }
}
