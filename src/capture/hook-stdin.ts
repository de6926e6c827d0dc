import type { Readable } from "node:stream"

export type StdinResult =
  | { readonly ok: true; readonly bytes: Buffer }
  | { readonly ok: false; readonly reason: "payload_too_large" | "stdin_timeout" }

const CLOSING_BRACE = 0x7d
const isSpace = (byte: number) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09

/** Whether the last byte other than white space is "}": only then can a JSON object have ended. */
const endsWithBrace = (bytes: Buffer): boolean => {
  let end = bytes.length - 1
  while (end >= 0 && isSpace(bytes[end] ?? 0)) end--
  return bytes[end] === CLOSING_BRACE
}

/** Whether `bytes` already hold one whole JSON object. */
export const isWholeJsonObject = (bytes: Buffer): boolean => {
  if (!endsWithBrace(bytes)) return false
  try {
    JSON.parse(bytes.toString("utf8"))
    return true
  } catch {
    return false
  }
}

/**
 * Reads stdin until it ends or already holds one whole JSON object (a caller that writes the
 * document but keeps the pipe open must not cost the agent the deadline), giving up once it
 * passes `maxBytes` (refused unread beyond that) or has not completed within `deadlineMs`.
 * Stops reading either way.
 */
export const readBoundedInput = (
  input: Readable,
  options: { readonly maxBytes: number; readonly deadlineMs: number }
): Promise<StdinResult> =>
  new Promise((resolve) => {
    const chunks: Array<Buffer> = []
    let size = 0
    let settled = false
    const finish = (result: StdinResult) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      input.off("data", onData)
      input.off("end", onEnd)
      input.off("error", onError)
      input.destroy()
      resolve(result)
    }
    const onData = (chunk: Buffer | string) => {
      const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk
      size += bytes.length
      if (size > options.maxBytes) return finish({ ok: false, reason: "payload_too_large" })
      chunks.push(bytes)
      if (!endsWithBrace(bytes)) return
      const whole = Buffer.concat(chunks, size)
      if (isWholeJsonObject(whole)) finish({ ok: true, bytes: whole })
    }
    const onEnd = () => finish({ ok: true, bytes: Buffer.concat(chunks, size) })
    // A closed or unreadable stdin is an empty document, which the decoder refuses.
    const onError = () => finish({ ok: true, bytes: Buffer.alloc(0) })
    // Timers run before I/O in Node's loop: on a machine busy enough to starve this process past
    // the deadline, input that arrived meanwhile is still taken (setImmediate runs after I/O).
    const timer = setTimeout(
      () => setImmediate(() => finish({ ok: false, reason: "stdin_timeout" })),
      options.deadlineMs
    )
    input.on("data", onData)
    input.on("end", onEnd)
    input.on("error", onError)
  })
