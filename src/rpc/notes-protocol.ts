import { Rpc, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"
import {
  LogUpdateRequest,
  LogUpdateResponse,
  OpenSessionRequest,
  OpenSessionResponse,
  SessionBindingConflict,
  UnknownContextSession,
  UpdateConflict
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

/** Authored updates, served by the daemon's single writer next to its jobs and history reads. */
export class NotesRpcs extends RpcGroup.make(OpenSession, LogUpdate) {}
