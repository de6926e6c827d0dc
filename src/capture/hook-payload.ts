import * as v from "valibot"
import { HookEvent, type HookEventName } from "./hook-event.js"

export type PayloadResult =
  | { readonly ok: true; readonly event: HookEvent }
  | { readonly ok: false; readonly reason: "bad_payload" | "event_mismatch" }

const utf8 = new TextDecoder("utf-8", { fatal: true })

/**
 * Decodes the stdin document: UTF-8, one JSON value, a HookEvent, and for the event argv names
 * (a handler registered for Stop must not record what claims to be a SessionStart).
 */
export const decodeHookPayload = (bytes: Uint8Array, expected: HookEventName): PayloadResult => {
  let json: unknown
  try {
    json = JSON.parse(utf8.decode(bytes))
  } catch {
    return { ok: false, reason: "bad_payload" }
  }
  const decoded = v.safeParse(HookEvent, json)
  if (!decoded.success) return { ok: false, reason: "bad_payload" }
  if (decoded.output.hook_event_name !== expected) return { ok: false, reason: "event_mismatch" }
  return { ok: true, event: decoded.output }
}
