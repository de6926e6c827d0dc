import type { ReadChunk } from "./hook-fs.js"

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

/** Input as it arrives: what it amounts to once it passes the cap or holds one whole JSON object. */
const gatherer = (maxBytes: number) => {
  const chunks: Array<Buffer> = []
  let size = 0
  return {
    add: (bytes: Buffer): StdinResult | undefined => {
      size += bytes.length
      if (size > maxBytes) return { ok: false, reason: "payload_too_large" }
      chunks.push(bytes)
      if (!endsWithBrace(bytes)) return undefined
      const whole = Buffer.concat(chunks, size)
      return isWholeJsonObject(whole) ? { ok: true, bytes: whole } : undefined
    },
    all: (): StdinResult => ({ ok: true, bytes: Buffer.concat(chunks, size) })
  }
}

export interface InputLimits {
  readonly maxBytes: number
  readonly deadlineMs: number
}

/**
 * The deadline: timers run before I/O in Node's loop, so on a machine busy enough to starve this
 * process past it, input that arrived meanwhile is still taken (setImmediate runs after I/O).
 */
const startDeadline = (deadlineMs: number, expire: () => void) => setTimeout(() => setImmediate(expire), deadlineMs)

/** How long to wait before reading again a descriptor that had nothing yet (a non-blocking pipe). */
const RETRY_MS = 5
const CHUNK_BYTES = 65_536

/**
 * Reads the input (the hook's stdin) until it ends or already holds one whole JSON object (a
 * caller that writes the document but keeps the pipe open must not cost the agent the deadline),
 * giving up once it passes `maxBytes` (refused unread beyond that) or has not completed within
 * `deadlineMs`. A read still pending at the end is left behind: the hook exits right after.
 */
export const readBoundedInput = (read: ReadChunk, options: InputLimits): Promise<StdinResult> =>
  new Promise((resolve) => {
    const gathered = gatherer(options.maxBytes)
    let settled = false
    const finish = (result: StdinResult) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(result)
    }
    const next = () => {
      if (settled) return
      const buffer = Buffer.allocUnsafe(CHUNK_BYTES)
      read(buffer, (error, bytesRead) => {
        if (settled) return
        if (error !== null) {
          // Nothing yet on a non-blocking descriptor: look again soon; any other failure reads as empty.
          if (error.code === "EAGAIN") setTimeout(next, RETRY_MS)
          else finish({ ok: true, bytes: Buffer.alloc(0) })
          return
        }
        if (bytesRead === 0) return finish(gathered.all())
        const result = gathered.add(buffer.subarray(0, bytesRead))
        if (result !== undefined) finish(result)
        else next()
      })
    }
    const timer = startDeadline(options.deadlineMs, () => finish({ ok: false, reason: "stdin_timeout" }))
    next()
  })
