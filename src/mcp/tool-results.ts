import { Schema } from "effect"
import { AUTHORED_UPDATE } from "../history/source-type.js"
import {
  LogUpdateResponse,
  NoteHistoryResponse,
  NoteRevisionEntry,
  OpenSessionResponse,
  UpdateNoteResponse
} from "../notes/notes-contract.js"
import { ContextResponse } from "../retrieval/context.js"
import { ContextStatusResponse } from "../retrieval/context-status.js"
import { SearchHit, SearchResponse, type SourceLocation } from "../retrieval/contract.js"
import { RecentResponse, RecentTurn } from "../retrieval/recent.js"

/**
 * What the MCP tools answer: the daemon's response schemas (`src/retrieval`), with one change the
 * tool contract asks for. A result's session is named for what it is: `context_session_id` for an
 * authored update (a session blctx opened for an agent's notes) and `source_session_id` for a
 * transcript (the agent's own session id, provenance only), never a bare `session_id` an agent
 * could take for the other kind. Every other field is the daemon's, derived here, never restated.
 */
const SessionKeys = {
  source_session_id: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true }).annotations({
    description:
      "Set when the result comes from a transcript (source_type codex_transcript or another *_transcript): the session id of the agent that wrote it, for provenance."
  }),
  context_session_id: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true }).annotations({
    description:
      "Set when the result is an authored update (source_type authored_update): the blctx session it was logged in."
  })
}

type SessionKeys = { readonly source_session_id?: string | null } | { readonly context_session_id?: string | null }

/** The fields of a response struct with `session_id` replaced, in place, by the two named keys. */
const renameSessionId = <F extends { readonly session_id: Schema.Struct.Field }>(
  fields: F
): Omit<F, "session_id"> & typeof SessionKeys =>
  Object.fromEntries(
    Object.entries(fields).flatMap(
      ([key, field]): ReadonlyArray<readonly [string, Schema.Struct.Field]> =>
        key === "session_id" ? Object.entries(SessionKeys) : [[key, field]]
    )
  ) as Omit<F, "session_id"> & typeof SessionKeys

export const McpSearchHit = Schema.Struct(renameSessionId(SearchHit.fields))
export const McpSearchResponse = Schema.Struct({ ...SearchResponse.fields, results: Schema.Array(McpSearchHit) })
export type McpSearchResponse = typeof McpSearchResponse.Type

export const McpRecentTurn = Schema.Struct(renameSessionId(RecentTurn.fields))
export const McpRecentResponse = Schema.Struct({ ...RecentResponse.fields, turns: Schema.Array(McpRecentTurn) })
export type McpRecentResponse = typeof McpRecentResponse.Type

export const McpContextResponse = Schema.Struct(renameSessionId(ContextResponse.fields))
export type McpContextResponse = typeof McpContextResponse.Type

/** context_status carries no session: the daemon's response as it is. */
export const McpContextStatusResponse = ContextStatusResponse

/**
 * The session key for a source: `authored_update` is an authored note, every other source type
 * (`codex_transcript`, `claude_transcript`, any later `*_transcript`) a transcript.
 */
export const sessionKeyFor = (sourceType: string, sessionId: string | null): SessionKeys =>
  sourceType === AUTHORED_UPDATE ? { context_session_id: sessionId } : { source_session_id: sessionId }

/** The same decision from a provenance: a note revision is an authored update. */
const sessionKeyForSource = (source: SourceLocation | undefined, sessionId: string | null): SessionKeys =>
  source?.kind === "note_revision" ? { context_session_id: sessionId } : { source_session_id: sessionId }

export const toMcpSearch = (response: SearchResponse): McpSearchResponse => ({
  ...response,
  results: response.results.map(({ session_id, ...hit }) => ({
    ...hit,
    ...sessionKeyFor(hit.source_type, session_id)
  }))
})

/**
 * Recent turns are transcript turns (the daemon lists turns of transcript files), but a turn
 * carries no source type of its own: its messages' provenance decides, so a note that ever shows
 * up here is still named as one.
 */
export const toMcpRecent = (response: RecentResponse): McpRecentResponse => ({
  ...response,
  turns: response.turns.map(({ session_id, ...turn }) => ({
    ...turn,
    ...sessionKeyForSource(turn.messages[0]?.source, session_id)
  }))
})

/**
 * A context answer holds one source's messages (one transcript file, or one note's revisions), so
 * any message's source type names the session. `sourceType` is that of the anchor, which the
 * caller looks up when the page holds no message (an offset past the end).
 */
export const toMcpContext = (response: ContextResponse, sourceType: string): McpContextResponse => {
  const { session_id, ...rest } = response
  return { ...rest, ...sessionKeyFor(sourceType, session_id) } as McpContextResponse
}

/**
 * The note tools' answers: the daemon's, with the blctx session named `context_session_id`, in
 * place of `session_id`, as in every answer about an authored update. Always set here.
 */
const ContextSessionKey = {
  context_session_id: Schema.String.annotations({
    description:
      "The blctx session (not the agent's own session id): pass it as log_update's session_id, or as search's filters.session."
  })
}

const withContextSession = <F extends { readonly session_id: Schema.Struct.Field }>(
  fields: F
): Omit<F, "session_id"> & typeof ContextSessionKey =>
  Object.fromEntries(
    Object.entries(fields).flatMap(
      ([key, field]): ReadonlyArray<readonly [string, Schema.Struct.Field]> =>
        key === "session_id" ? Object.entries(ContextSessionKey) : [[key, field]]
    )
  ) as Omit<F, "session_id"> & typeof ContextSessionKey

export const McpOpenSessionResponse = Schema.Struct(withContextSession(OpenSessionResponse.fields))
export type McpOpenSessionResponse = typeof McpOpenSessionResponse.Type

export const McpLogUpdateResponse = Schema.Struct(withContextSession(LogUpdateResponse.fields))
export type McpLogUpdateResponse = typeof McpLogUpdateResponse.Type

const renamed = <R extends { readonly session_id: string }>({ session_id, ...rest }: R) => ({
  ...rest,
  context_session_id: session_id
})

export const toMcpOpenSession = (response: OpenSessionResponse): McpOpenSessionResponse => renamed(response)

export const toMcpLogUpdate = (response: LogUpdateResponse): McpLogUpdateResponse => renamed(response)

export const McpUpdateNoteResponse = Schema.Struct(withContextSession(UpdateNoteResponse.fields))
export type McpUpdateNoteResponse = typeof McpUpdateNoteResponse.Type

export const toMcpUpdateNote = (response: UpdateNoteResponse): McpUpdateNoteResponse => renamed(response)

/** note_history: each revision names the blctx session that wrote it `context_session_id`. */
export const McpNoteRevision = Schema.Struct(withContextSession(NoteRevisionEntry.fields))
export const McpNoteHistoryResponse = Schema.Struct({
  ...NoteHistoryResponse.fields,
  revisions: Schema.Array(McpNoteRevision)
})
export type McpNoteHistoryResponse = typeof McpNoteHistoryResponse.Type

export const toMcpNoteHistory = (response: NoteHistoryResponse): McpNoteHistoryResponse => ({
  ...response,
  revisions: response.revisions.map(renamed)
})
