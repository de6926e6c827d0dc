import type { SessionInfo } from "../transcripts/classification.js"
import { redactNullable } from "./redact.js"

/**
 * A session's metadata as it is stored and shown (the cwd is every result's `project`): each string
 * field redacted like message text. Ordinary ids, versions, paths and times come out unchanged.
 */
export const redactSession = (
  session: SessionInfo | null
): { readonly session: SessionInfo | null; readonly redactions: number } => {
  if (session === null) return { session: null, redactions: 0 }
  let redactions = 0
  const field = (value: string | null) => {
    const redacted = redactNullable(value)
    redactions += redacted.total
    return redacted.text
  }
  const redacted: SessionInfo = {
    ...session,
    id: field(session.id),
    cwd: field(session.cwd),
    cli_version: field(session.cli_version),
    originator: field(session.originator),
    started_at: field(session.started_at),
    forked_from_id: field(session.forked_from_id),
    subagent: field(session.subagent),
    ...(session.parent_session_id === undefined ? {} : { parent_session_id: field(session.parent_session_id) })
  }
  return { session: redacted, redactions }
}
