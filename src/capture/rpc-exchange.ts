import type { FromServerEncoded, RequestEncoded } from "@effect/rpc/RpcMessage"
import { busyPauseMs, DAEMON_BUSY_TAG } from "../rpc/busy-retry.js"

/**
 * One raw @effect/rpc request over blctxd's NDJSON socket, without `effect`: the hook's prompt
 * recall and `blctx search`'s fast path each ask one question, and loading the RPC stack would
 * cost more start-up time than the answer takes. Only types come from @effect/rpc (erased at
 * build), so this module stays in the effect-free bundles (src/capture/hook-import-policy.ts,
 * src/cli/fast-path-import-policy.ts). It lives in capture/ because the hook's graph stays there.
 */

/** The id of the one request an exchange sends; its answer is the `Exit` that carries it. */
const REQUEST_ID = "1"

export interface RpcRequest {
  readonly tag: string
  readonly payload: unknown
}

export interface ExchangeLimits {
  /** One hard deadline, from connecting to the answer. */
  readonly deadlineMs: number
  /** A longer unfinished line is not an answer: the exchange fails rather than buffer on. */
  readonly maxLineChars: number
}

/** How an exchange ended; the callers decode `value` and name the failures their own way. */
export type ExchangeOutcome =
  /** The request's `Exit` was a success; `value` is its encoded value, not yet checked. */
  | { readonly _tag: "Success"; readonly value: unknown }
  /**
   * The request's `Exit` was not a success, or the server sent a `Defect` or `ClientProtocolError`.
   * `errorTag` is the tag of the error a plain failure carries (`DaemonBusy`), when it has one.
   */
  | { readonly _tag: "ErrorAnswer"; readonly errorTag?: string }
  /** A line that is not JSON, or an unfinished line longer than `maxLineChars`. */
  | { readonly _tag: "MalformedAnswer" }
  | { readonly _tag: "Timeout" }
  /** No connection, or the connection ended before the answer. */
  | { readonly _tag: "Unavailable" }

/** The request as one NDJSON line. */
export const requestLine = (request: RpcRequest): string => {
  const frame: RequestEncoded = {
    _tag: "Request",
    id: REQUEST_ID,
    tag: request.tag,
    payload: request.payload,
    headers: []
  }
  return `${JSON.stringify(frame)}\n`
}

/** A failed `Exit`: with the tag of its error when the cause is one plain failure (`Fail`). */
const errorAnswer = (cause: unknown): ExchangeOutcome => {
  const { _tag, error } = (cause ?? {}) as { readonly _tag?: unknown; readonly error?: { readonly _tag?: unknown } }
  const errorTag = _tag === "Fail" ? error?._tag : undefined
  return typeof errorTag === "string" ? { _tag: "ErrorAnswer", errorTag } : { _tag: "ErrorAnswer" }
}

/** What one server line means for this request: how the exchange ends, or nothing yet. */
const judgeLine = (line: string): ExchangeOutcome | undefined => {
  let message: FromServerEncoded
  try {
    message = JSON.parse(line) as FromServerEncoded
  } catch {
    return { _tag: "MalformedAnswer" }
  }
  switch (message?._tag) {
    case "Exit": {
      if (message.requestId !== REQUEST_ID) return undefined
      const exit = message.exit as { readonly _tag?: unknown; readonly value?: unknown; readonly cause?: unknown }
      return exit?._tag === "Success" ? { _tag: "Success", value: exit.value } : errorAnswer(exit?.cause)
    }
    case "Defect":
    case "ClientProtocolError":
      return { _tag: "ErrorAnswer" }
    default:
      return undefined
  }
}

/**
 * Sends `request` over the socket at `socketPath` and reads lines until its answer; never rejects.
 * `node:net` is loaded here, on first use, not with the module: the hook's other events (a turn's
 * Stop, a session's end) never open a socket, and loading it would cost each of them start-up
 * time. The deadline runs from the call, so loading it comes out of the deadline too.
 */
export const rpcExchange = (
  socketPath: string,
  request: RpcRequest,
  limits: ExchangeLimits
): Promise<ExchangeOutcome> =>
  new Promise((resolve) => {
    let settled = false
    let buffer = ""
    let socket: { readonly destroy: () => void } | undefined
    const done = (outcome: ExchangeOutcome) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket?.destroy()
      resolve(outcome)
    }
    const timer = setTimeout(() => done({ _tag: "Timeout" }), limits.deadlineMs)
    const exchange = (Net: typeof import("node:net")) => {
      if (settled) return
      const connection = Net.createConnection({ path: socketPath })
      socket = connection
      connection.setEncoding("utf8")
      connection.on("error", () => done({ _tag: "Unavailable" }))
      connection.on("close", () => done({ _tag: "Unavailable" }))
      connection.on("data", (chunk: string) => {
        buffer += chunk
        let newline = buffer.indexOf("\n")
        while (newline !== -1) {
          const outcome = judgeLine(buffer.slice(0, newline))
          if (outcome !== undefined) return done(outcome)
          buffer = buffer.slice(newline + 1)
          newline = buffer.indexOf("\n")
        }
        if (buffer.length > limits.maxLineChars) done({ _tag: "MalformedAnswer" })
      })
      connection.write(requestLine(request))
    }
    import("node:net").then(exchange, () => done({ _tag: "Unavailable" }))
  })

const isBusy = (outcome: ExchangeOutcome) => outcome._tag === "ErrorAnswer" && outcome.errorTag === DAEMON_BUSY_TAG

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * `rpcExchange`, asked again while the daemon answers busy (`DaemonBusy`), as the RPC client does
 * (`busy-retry.ts`), all within the one deadline. When the deadline passes after a busy answer,
 * the outcome is that answer: the daemon is there and working, not silent.
 */
export const rpcExchangeRetryingBusy = async (
  socketPath: string,
  request: RpcRequest,
  limits: ExchangeLimits
): Promise<ExchangeOutcome> => {
  const end = Date.now() + limits.deadlineMs
  let busy: ExchangeOutcome | undefined
  for (let attempt = 0; ; attempt++) {
    const outcome = await rpcExchange(socketPath, request, { ...limits, deadlineMs: end - Date.now() })
    if (busy !== undefined && outcome._tag === "Timeout") return busy
    if (!isBusy(outcome)) return outcome
    busy = outcome
    const wait = busyPauseMs(attempt)
    if (wait >= end - Date.now()) return busy
    await pause(wait)
  }
}
