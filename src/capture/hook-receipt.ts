import { HOOK_EVENTS } from "./hook-event.js"

/**
 * The hook handler's one stderr line per run: `blctx-hook: <event> <outcome> <reason>`. Codex
 * keeps a hook's stderr in its logs, so the line says what happened without saying anything of
 * the conversation. The reasons are a closed set; each belongs to one outcome. Must not import
 * `effect` (the handler's start-up budget).
 */
const OUTCOME_OF = {
  // The event is spooled; for UserPromptSubmit the reason also says what prompt-time recall did.
  captured: "captured",
  captured_with_context: "captured",
  recall_no_match: "captured",
  recall_skipped: "captured",
  recall_disabled: "captured",
  recall_timeout: "captured",
  recall_unavailable: "captured",
  recall_failed: "captured",
  // Nothing to do: blctx is not installed here, or this handler belongs to a replaced registration.
  not_installed: "skipped",
  inactive: "skipped",
  other_installation: "skipped",
  stale_generation: "skipped",
  // An agent CLI blctx ran itself (a status check), not a person's session.
  own_call: "skipped",
  // Nothing was spooled, because of the input or this machine.
  bad_arguments: "failed",
  bad_payload: "failed",
  event_mismatch: "failed",
  payload_too_large: "failed",
  stdin_timeout: "failed",
  manifest_unreadable: "failed",
  unsafe_directory: "failed",
  binding_failed: "failed",
  spool_failed: "failed",
  internal_error: "failed"
} as const

export type ReceiptReason = keyof typeof OUTCOME_OF
export type ReceiptOutcome = (typeof OUTCOME_OF)[ReceiptReason]
export const RECEIPT_REASONS = Object.keys(OUTCOME_OF) as ReadonlyArray<ReceiptReason>

export const outcomeOf = (reason: ReceiptReason): ReceiptOutcome => OUTCOME_OF[reason]

/** The event as argv named it, or `unknown`: nothing but a known event name reaches the log. */
export const receiptEvent = (argvEvent: string | undefined): string =>
  (HOOK_EVENTS as ReadonlyArray<string>).includes(argvEvent ?? "") ? (argvEvent as string) : "unknown"

export const receiptLine = (event: string, reason: ReceiptReason): string =>
  `blctx-hook: ${receiptEvent(event)} ${outcomeOf(reason)} ${reason}`
