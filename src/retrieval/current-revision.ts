/**
 * Keeps, of the messages `m`, every transcript message and only the current (highest) revision
 * of each note. Older revisions keep their messages for `note_history`, but search, recent and
 * context show a note as it is now. `UNIQUE (note_id, note_revision)` on messages answers the
 * subquery from its index.
 */
export const CURRENT_REVISION =
  "(m.note_id IS NULL OR m.note_revision = (SELECT max(cur.note_revision) FROM messages cur WHERE cur.note_id = m.note_id))"

/** How many revisions the note of message `m` has (its highest revision number); null for a transcript message. */
export const NOTE_REVISIONS =
  "(SELECT max(cur.note_revision) FROM messages cur WHERE cur.note_id = m.note_id AND m.note_id IS NOT NULL)"
