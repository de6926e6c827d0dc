import { HOOK_EVENTS } from "../../capture/hook-event.js"
import type { CaptureStatus } from "../../retrieval/capture-status.js"

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

const orList = (words: ReadonlyArray<string>) =>
  words.length <= 1 ? words.join("") : `${words.slice(0, -1).join(", ")} or ${words[words.length - 1]}`

/**
 * Something a hooks doctor found. A `waiting` finding is capture not having happened yet (hooks
 * not approved, an event type not fired, captures still queued): a fresh install looks like this
 * until the agent is used, so it is reported, not failed. A `fault` is something broken.
 */
export interface HookFinding {
  readonly text: string
  readonly kind: "waiting" | "fault"
}

export const waiting = (text: string): HookFinding => ({ text, kind: "waiting" })
export const fault = (text: string): HookFinding => ({ text, kind: "fault" })

/**
 * What capture has not done yet or did wrong, each a phrase a person can act on; empty when every
 * event type has arrived, captured content is indexed and nothing is pending or failed.
 */
export const captureFindings = (c: CaptureStatus, agent: string): ReadonlyArray<HookFinding> => {
  const silent = HOOK_EVENTS.filter((event) => c.events[event] === 0)
  return [
    ...(silent.length > 0 ? [waiting(`no ${orList(silent)} event has arrived`)] : []),
    ...(c.pending > 0 ? [waiting(`${plural(c.pending, "capture")} pending`)] : []),
    ...(c.pending === 0 && c.indexed_sessions === 0 ? [waiting("no captured session is indexed yet")] : []),
    ...(c.null_paths > 0
      ? [fault(`${plural(c.null_paths, "captured session")} still without a transcript path from ${agent}`)]
      : []),
    ...(c.errors > 0
      ? [fault(`${plural(c.errors, "capture error")}${c.last_error === null ? "" : ` (last: ${c.last_error})`}`)]
      : [])
  ]
}

/**
 * A hooks doctor's verdict from its findings: failed when any is a fault (every finding named);
 * passed otherwise, naming what is still waiting and what to do, before `healthy`.
 */
export const hooksVerdict = (
  findings: ReadonlyArray<HookFinding>,
  remedies: ReadonlyArray<string>,
  healthy: string
):
  | { readonly _tag: "Failed"; readonly detail: string; readonly remediation: string }
  | { readonly _tag: "Passed"; readonly detail: string } => {
  const text = findings.map((f) => f.text).join("; ")
  if (findings.some((f) => f.kind === "fault"))
    return { _tag: "Failed", detail: text, remediation: remedies.join("; ") }
  if (findings.length === 0) return { _tag: "Passed", detail: healthy }
  return { _tag: "Passed", detail: `${healthy}; waiting, not a fault: ${text}; next: ${remedies.join("; ")}` }
}

/** One line of what capture has done, for a passing doctor. */
export const describeCapture = (c: CaptureStatus): string =>
  `events: ${HOOK_EVENTS.map((e) => `${e} ${c.events[e]}`).join(", ")}; ${plural(c.indexed_sessions, "captured session")} indexed${c.last_event_at === null ? "" : `; last event at ${c.last_event_at}`}`
