import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import type { ParseResult } from "effect"
import { Data } from "effect"
import { decodeIssues, MAX_LISTED_ISSUES } from "../domain/decode-issues.js"
import type { ForgetTokenExpired, ForgetTokenMismatch, InvalidForgetSelector } from "../forget/forget-contract.js"
import type {
  SessionBindingConflict,
  StaleRevision,
  UnknownContextSession,
  UnknownNote,
  UpdateConflict
} from "../notes/notes-contract.js"
import type { InvalidQuery } from "../retrieval/invalid-query.js"
import type { DaemonBusy, DaemonStoreError, DaemonUnavailable } from "../rpc/errors.js"
import { stringifyForTerminal } from "../terminal/sanitize.js"
import type { InstallationUnusable } from "./installation-check.js"

/** One problem with a tool's arguments: where (a dotted path, `(arguments)` for the whole) and what. */
export interface ArgumentIssue {
  readonly field: string
  readonly problem: string
}

/** The arguments do not match the tool's input schema: nothing was sent to the daemon. */
export class InvalidArguments extends Data.TaggedError("InvalidArguments")<{
  readonly tool: string
  readonly issues: ReadonlyArray<ArgumentIssue>
}> {
  override get message() {
    return `invalid arguments for ${this.tool}: ${this.issues.map((i) => `${i.field}: ${i.problem}`).join("; ")}`
  }
}

/**
 * The problems a decoding found, one per field with the path of the field it is about, each short
 * and redacted (`decodeIssues`: never the whole value given). Only a field's first problem is kept,
 * none for a field whose own fields have problems of their own, and at most ten in all (the rest
 * counted in a last entry).
 */
export const argumentIssues = (error: ParseResult.ParseError): ReadonlyArray<ArgumentIssue> => {
  const issues = new Map<string, string>()
  for (const issue of decodeIssues(error)) {
    const field = issue.field === "" ? "(arguments)" : issue.field
    if (!issues.has(field)) {
      issues.set(field, issue.kind === "unexpected" ? "is not an argument of this tool" : issue.problem)
    }
  }
  const fields = [...issues.keys()]
  const listed = [...issues]
    .filter(([field]) => !fields.some((other) => other.startsWith(`${field}.`)))
    .map(([field, problem]) => ({ field, problem }))
  if (listed.length <= MAX_LISTED_ISSUES) return listed
  const rest = (listed.length - MAX_LISTED_ISSUES).toLocaleString("en-US")
  return [...listed.slice(0, MAX_LISTED_ISSUES), { field: "(arguments)", problem: `and ${rest} more problems` }]
}

/** The failures a daemon call can end in (the session adds DaemonUnavailable and the identity check). */
export type CallFailure =
  | InvalidQuery
  | DaemonStoreError
  | DaemonUnavailable
  | DaemonBusy
  | SessionBindingConflict
  | UnknownContextSession
  | UpdateConflict
  | UnknownNote
  | StaleRevision
  | InvalidForgetSelector
  | ForgetTokenMismatch
  | ForgetTokenExpired

/** Everything a tool can fail with, each an answer an agent can act on. */
export type ToolFailure = InvalidArguments | InstallationUnusable | CallFailure

/**
 * What an agent can tell apart without reading prose: its own mistake (`invalid_arguments`,
 * `invalid_query`, and for the note tools `session_conflict`, `unknown_session`,
 * `update_conflict`, `unknown_note`, `stale_revision`: call again differently), or blctx unable to answer (`daemon_unavailable`,
 * `installation_inactive`, `installation_mismatch`, `store_error`: a person must run the
 * remediation; retrying the same call will not help until then), or blctx busy (`daemon_busy`:
 * the same call, retried in a moment, is answered).
 */
export type ToolErrorKind =
  | "invalid_arguments"
  | "invalid_query"
  | "session_conflict"
  | "unknown_session"
  | "update_conflict"
  | "unknown_note"
  | "stale_revision"
  | "invalid_selector"
  | "forget_token_mismatch"
  | "forget_token_expired"
  | "daemon_unavailable"
  | "daemon_busy"
  | "installation_inactive"
  | "installation_mismatch"
  | "store_error"
  | "internal_error"

export interface ToolErrorDocument {
  readonly error: {
    readonly kind: ToolErrorKind
    readonly tool: string
    readonly message: string
    readonly remediation: string
    readonly fields?: ReadonlyArray<ArgumentIssue>
  }
}

/** The error document of a failure: what happened and what fixes it. */
export const errorDocument = (tool: string, failure: ToolFailure): ToolErrorDocument => {
  switch (failure._tag) {
    case "InvalidArguments":
      return {
        error: {
          kind: "invalid_arguments",
          tool,
          message: failure.message,
          remediation: `Call ${tool} again with arguments that match its input schema.`,
          fields: failure.issues
        }
      }
    case "InvalidQuery":
      return { error: { kind: "invalid_query", tool, message: failure.reason, remediation: failure.remediation } }
    case "InstallationUnusable":
      return { error: { kind: failure.kind, tool, message: failure.reason, remediation: failure.remediation } }
    case "DaemonUnavailable":
      return {
        error: {
          kind: "daemon_unavailable",
          tool,
          message: `the blctx daemon did not answer (socket ${failure.socket}): ${failure.reason}`,
          remediation: failure.remediation
        }
      }
    case "DaemonBusy":
      return {
        error: {
          kind: "daemon_busy",
          tool,
          message: `the blctx daemon is busy (${failure.in_flight} requests in hand): it answered, but refused this one`,
          remediation: "Retry in a moment: the same call will be answered once the burst has passed."
        }
      }
    case "SessionBindingConflict":
      return { error: { kind: "session_conflict", tool, message: failure.message, remediation: failure.remediation } }
    case "UnknownContextSession":
      return { error: { kind: "unknown_session", tool, message: failure.message, remediation: failure.remediation } }
    case "UpdateConflict":
      return { error: { kind: "update_conflict", tool, message: failure.message, remediation: failure.remediation } }
    case "UnknownNote":
      return { error: { kind: "unknown_note", tool, message: failure.message, remediation: failure.remediation } }
    case "StaleRevision":
      return { error: { kind: "stale_revision", tool, message: failure.message, remediation: failure.remediation } }
    case "InvalidForgetSelector":
      return { error: { kind: "invalid_selector", tool, message: failure.message, remediation: failure.remediation } }
    case "ForgetTokenMismatch":
      return {
        error: { kind: "forget_token_mismatch", tool, message: failure.message, remediation: failure.remediation }
      }
    case "ForgetTokenExpired":
      return {
        error: { kind: "forget_token_expired", tool, message: failure.message, remediation: failure.remediation }
      }
    case "DaemonStoreError":
      return {
        error: {
          kind: "store_error",
          tool,
          message: `the blctx index database ${failure.path} failed: ${failure.reason}`,
          remediation: failure.remediation
        }
      }
  }
}

/** A defect (a bug in blctx): reported, never a crash of the server. */
export const internalErrorDocument = (tool: string, detail: string): ToolErrorDocument => ({
  error: {
    kind: "internal_error",
    tool,
    message: `blctx failed unexpectedly: ${detail}`,
    remediation: "Run `blctx doctor`; the MCP server's stderr (the agent's MCP log) has the details."
  }
})

/**
 * A tool error as MCP carries it: `isError: true` and one text block holding the error document
 * as JSON (escaped so no terminal control survives, still the same JSON value). There is no
 * `structuredContent`: it would have to match the tool's output schema, which describes answers.
 */
export const errorResult = (document: ToolErrorDocument): CallToolResult => ({
  isError: true,
  content: [{ type: "text", text: stringifyForTerminal(document, 0) }]
})
