import { Schema } from "effect"
import type { ContextNotFound } from "./context.js"
import type { TimeRangeError } from "./time-range.js"

/** A query that cannot be run as asked (a bad date, an unknown context id): says what to send instead. */
export class InvalidQuery extends Schema.TaggedError<InvalidQuery>()("InvalidQuery", {
  reason: Schema.String,
  remediation: Schema.String
}) {
  override get message() {
    return `${this.reason}. ${this.remediation}`
  }
}

/** The one wording of each rejection, wherever the read runs (a query worker or in process). */
export const invalidQuery = (e: TimeRangeError | ContextNotFound): InvalidQuery =>
  e._tag === "TimeRangeError"
    ? new InvalidQuery({
        reason: `${e.input}: ${e.message}`,
        remediation: "Dates are YYYY-MM-DD or ISO 8601 date-times; without an offset they mean UTC."
      })
    : new InvalidQuery({
        reason: `no result has context id ${e.context_id}`,
        remediation: "Use a context_id from a search or recent answer."
      })
