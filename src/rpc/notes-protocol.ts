import { Rpc, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"
import {
  ListNotesRequest,
  ListNotesResponse,
  LogUpdateRequest,
  LogUpdateResponse,
  NoteHistoryRequest,
  NoteHistoryResponse,
  OpenSessionRequest,
  OpenSessionResponse,
  SessionBindingConflict,
  StaleRevision,
  UnknownContextSession,
  UnknownNote,
  UpdateConflict,
  UpdateNoteRequest,
  UpdateNoteResponse
} from "../notes/notes-contract.js"
import { DaemonStoreError } from "./errors.js"

// Authored updates: the two writes an agent makes on purpose. Their requests, answers and
// refusals are defined once in src/notes; the procedures below only name them.

/** Opens (or, for a binding it already has, returns) the blctx session bound to a caller's key. */
export const OpenSession = Rpc.make("OpenSession", {
  payload: OpenSessionRequest,
  success: OpenSessionResponse,
  error: Schema.Union(SessionBindingConflict, UnknownContextSession, DaemonStoreError)
})

/** Logs a note; answers once it is committed (its embedding follows in the background). */
export const LogUpdate = Rpc.make("LogUpdate", {
  payload: LogUpdateRequest,
  success: LogUpdateResponse,
  error: Schema.Union(UnknownContextSession, UpdateConflict, DaemonStoreError)
})

/**
 * Adds a revision to a note still at `expected_revision`; answers once it is committed (its
 * embedding follows in the background, replacing the old revision's vectors).
 */
export const UpdateNote = Rpc.make("UpdateNote", {
  payload: UpdateNoteRequest,
  success: UpdateNoteResponse,
  error: Schema.Union(UnknownNote, StaleRevision, UnknownContextSession, UpdateConflict, DaemonStoreError)
})

/** Every revision of a note, oldest first: a read, answered by the query workers. */
export const NoteHistory = Rpc.make("NoteHistory", {
  payload: NoteHistoryRequest,
  success: NoteHistoryResponse,
  error: Schema.Union(UnknownNote, DaemonStoreError)
})

/** Notes by their current revision, newest change first: a read, answered by the query workers. */
export const ListNotes = Rpc.make("ListNotes", {
  payload: ListNotesRequest,
  success: ListNotesResponse,
  error: DaemonStoreError
})

/** The note writes; the note reads (`NoteHistory`, `ListNotes`) are forwarded reads (`history-protocol.ts`). */
export class NotesRpcs extends RpcGroup.make(OpenSession, LogUpdate, UpdateNote) {}
