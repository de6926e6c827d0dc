import { Schema } from "effect"
import { parseContextId } from "../domain/context-id.js"
import { KNOWN_AGENTS, type UnknownAgent } from "./agent-filter.js"
import type { ContextNotFound, ContextOfOtherAgent } from "./context.js"
import type { TimeRangeError } from "./time-range.js"

/** A query that cannot be run as asked (a bad date, an unknown context id or agent): says what to send instead. */
export class InvalidQuery extends Schema.TaggedError<InvalidQuery>()("InvalidQuery", {
  reason: Schema.String,
  remediation: Schema.String
}) {
  override get message() {
    return `${this.reason}. ${this.remediation}`
  }
}

/** The rejections a read can end in, each worded once below. */
export type QueryRejection = TimeRangeError | ContextNotFound | UnknownAgent | ContextOfOtherAgent

/** `codex, claude or gemini`. */
const AGENTS = `${KNOWN_AGENTS.slice(0, -1).join(", ")} or ${KNOWN_AGENTS.at(-1)}`

/** The one wording of each rejection, wherever the read runs (a query worker or in process). */
export const invalidQuery = (e: QueryRejection): InvalidQuery => {
  switch (e._tag) {
    case "TimeRangeError":
      return new InvalidQuery({
        reason: `${e.input}: ${e.message}`,
        // A message that already lists the accepted forms is not followed by them again.
        remediation: e.message.startsWith("expected")
          ? "Pass the time in one of those forms."
          : "Dates are YYYY-MM-DD or ISO 8601 date-times; without an offset they mean UTC."
      })
    case "ContextNotFound":
      return new InvalidQuery({
        reason: `no result has context id ${e.context_id}`,
        remediation:
          parseContextId(e.context_id)?.kind === "chunk"
            ? "Ids of the form c<number> named index chunks, which are cut again when the embedding model changes; search again for an id of the form m<number>@<start>-<end>, which lasts as long as its text is stored."
            : "Use a context_id from a search or recent answer."
      })
    case "UnknownAgent":
      return new InvalidQuery({
        reason: `unknown agent ${JSON.stringify(e.agent)}: blctx keeps the history of ${AGENTS}`,
        remediation: `Pass agent ${AGENTS}, or leave agent out to search every agent's history.`
      })
    case "ContextOfOtherAgent":
      return new InvalidQuery({
        reason: `context id ${e.context_id} comes from ${e.found === null ? "a note of another agent" : `${e.found}'s history`}, not ${e.agent}'s`,
        remediation: `Leave agent out, or use a context_id from a search or recent answer filtered to ${e.agent}.`
      })
  }
}
