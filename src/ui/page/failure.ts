import { Cause, Runtime } from "effect"
import { el } from "./el.js"

/**
 * A refusal as a person reads it: the daemon's message and what to do, never a stack. A request
 * the page's session no longer admits (a daemon restarted, a link expired) says how to get in.
 */

export interface Failure {
  readonly tag: string
  readonly message: string
  readonly remediation: string | undefined
}

const unwrap = (error: unknown): unknown => {
  if (Runtime.isFiberFailure(error)) {
    const cause = error[Runtime.FiberFailureCauseId]
    const failure = Cause.failureOption(cause)
    if (failure._tag === "Some") return failure.value
    return Cause.squash(cause)
  }
  return error
}

const SESSION_LOST =
  "The page's session is not accepted: run `blctx ui` for a new link (a daemon restart ends every session)."

export const failureOf = (error: unknown): Failure => {
  const e = unwrap(error) as { _tag?: unknown; message?: unknown; remediation?: unknown; reason?: unknown }
  const tag = typeof e?._tag === "string" ? e._tag : "Error"
  const message = typeof e?.message === "string" && e.message !== "" ? e.message : String(e)
  const remediation = typeof e?.remediation === "string" ? e.remediation : undefined
  if (tag === "RpcClientError" && /40[13]/.test(message)) return { tag, message, remediation: SESSION_LOST }
  return { tag, message, remediation }
}

/** A refusal, rendered. */
export const failureView = (error: unknown): HTMLElement => {
  const f = failureOf(error)
  return el(
    "div",
    { class: "failure", role: "alert", "data-kind": f.tag },
    el("strong", {}, f.message),
    f.remediation === undefined ? null : el("p", {}, f.remediation)
  )
}
