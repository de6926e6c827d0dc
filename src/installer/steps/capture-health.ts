import type { CaptureStatus } from "../../capture/capture-status.js"
import { HOOK_EVENTS } from "../../capture/hook-event.js"

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

const orList = (words: ReadonlyArray<string>) =>
  words.length <= 1 ? words.join("") : `${words.slice(0, -1).join(", ")} or ${words[words.length - 1]}`

/**
 * What capture has not done yet, each a phrase a person can act on; empty when every event type
 * has arrived, captured content is indexed and nothing is pending or failed.
 */
export const captureProblems = (c: CaptureStatus, agent = "Codex"): ReadonlyArray<string> => {
  const silent = HOOK_EVENTS.filter((event) => c.events[event] === 0)
  return [
    ...(silent.length > 0 ? [`no ${orList(silent)} event has arrived`] : []),
    ...(c.pending > 0 ? [`${plural(c.pending, "capture")} pending`] : []),
    ...(c.pending === 0 && c.indexed_sessions === 0 ? ["no captured session is indexed yet"] : []),
    ...(c.null_paths > 0
      ? [`${plural(c.null_paths, "captured session")} still without a transcript path from ${agent}`]
      : []),
    ...(c.errors > 0
      ? [`${plural(c.errors, "capture error")}${c.last_error === null ? "" : ` (last: ${c.last_error})`}`]
      : [])
  ]
}

/** One line of what capture has done, for a passing doctor. */
export const describeCapture = (c: CaptureStatus): string =>
  `events: ${HOOK_EVENTS.map((e) => `${e} ${c.events[e]}`).join(", ")}; ${plural(c.indexed_sessions, "captured session")} indexed${c.last_event_at === null ? "" : `; last event at ${c.last_event_at}`}`
