import { Schema } from "effect"

/**
 * Bounds on what a request may carry, sized to what a query needs: an oversized request is
 * refused by decoding, with a message saying which field and what the limit is.
 */
export const MAX_QUERY_CHARS = 4_000
export const MAX_PATH_CHARS = 4_096
export const MAX_ID_CHARS = 200
export const MAX_DATE_CHARS = 100

/** A file or directory path (a project filter, a transcript). */
export const BoundedPath = Schema.String.pipe(Schema.maxLength(MAX_PATH_CHARS))
/** An identifier: a session id, a job kind, an origin. */
export const BoundedId = Schema.String.pipe(Schema.maxLength(MAX_ID_CHARS))
/** A date or time as a person types it (`2026-01-02`, an ISO timestamp with an offset). */
export const BoundedDate = Schema.String.pipe(Schema.maxLength(MAX_DATE_CHARS))
