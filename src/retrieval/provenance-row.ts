import { Schema } from "effect"

/**
 * The provenance columns every read selects with a message (`ProvenanceRow`): the agent, and a
 * transcript span or a note revision. Spread into each read's row schema, so the rows a reader
 * decodes are the rows `sourceLocationOf` expects.
 */
export const ProvenanceColumns = {
  agent: Schema.NullOr(Schema.String),
  path: Schema.NullOr(Schema.String),
  line: Schema.NullOr(Schema.Number),
  byte_start: Schema.NullOr(Schema.Number),
  byte_end: Schema.NullOr(Schema.Number),
  note_id: Schema.NullOr(Schema.String),
  note_revision: Schema.NullOr(Schema.Number)
}
