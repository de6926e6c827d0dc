import * as Net from "node:net"
import type { FromServerEncoded, RequestEncoded } from "@effect/rpc/RpcMessage"
import * as v from "valibot"
import type { PromptRecallRequest, PromptRecallResponse } from "../retrieval/prompt-recall.js"

/**
 * The hook's one question to blctxd: `PromptRecall`, sent as a raw @effect/rpc NDJSON frame over
 * the daemon's socket, because loading the RPC stack (and `effect`) would cost the hook more
 * start-up time than the whole answer may take. Only types come from @effect/rpc and the
 * contract (erased at build). One hard deadline covers connecting and answering: no answer in
 * time, a failure or any error means no recall, never a longer wait.
 */

/** What the hook reads of an answer; the encoded PromptRecallResponse fits it (checked below). */
export const RecallAnswer = v.looseObject({
  query_mode: v.string(),
  hits: v.array(
    v.looseObject({
      text: v.string(),
      source: v.variant("kind", [
        v.looseObject({ kind: v.literal("transcript_span"), path: v.string(), line: v.number() }),
        v.looseObject({ kind: v.literal("note_revision"), note_id: v.string(), revision: v.number() })
      ]),
      session_id: v.nullable(v.string()),
      timestamp: v.nullable(v.string()),
      role: v.string(),
      relevance: v.number()
    })
  )
})
export type RecallAnswer = v.InferOutput<typeof RecallAnswer>

type Assert<T extends true> = T
type Encoded = (typeof PromptRecallResponse)["Encoded"]
/** Compile-time: whatever the daemon encodes, this client can read (arrays aside: theirs are readonly). */
export type EncodedResponseFits = Assert<
  Encoded["hits"][number] extends RecallAnswer["hits"][number]
    ? Encoded["query_mode"] extends RecallAnswer["query_mode"]
      ? true
      : false
    : false
>

export const PROMPT_RECALL_TAG = "PromptRecall"
const REQUEST_ID = "1"
/** An answer is a few kilobytes; a line this long is not one. */
const MAX_LINE_CHARS = 1_048_576

export type RecallResult =
  | { readonly ok: true; readonly answer: RecallAnswer }
  | { readonly ok: false; readonly reason: "recall_timeout" | "recall_unavailable" | "recall_failed" }

export const promptRecallFrame = (request: PromptRecallRequest): string => {
  const frame: RequestEncoded = {
    _tag: "Request",
    id: REQUEST_ID,
    tag: PROMPT_RECALL_TAG,
    payload: request,
    headers: []
  }
  return `${JSON.stringify(frame)}\n`
}

/** What one server line means for this request: an answer, a failure, or nothing yet. */
const judgeLine = (line: string): RecallResult | undefined => {
  let message: FromServerEncoded
  try {
    message = JSON.parse(line) as FromServerEncoded
  } catch {
    return { ok: false, reason: "recall_failed" }
  }
  switch (message?._tag) {
    case "Exit": {
      if (message.requestId !== REQUEST_ID) return undefined
      const exit = message.exit as { readonly _tag?: unknown; readonly value?: unknown }
      if (exit?._tag !== "Success") return { ok: false, reason: "recall_failed" }
      const answer = v.safeParse(RecallAnswer, exit.value)
      return answer.success ? { ok: true, answer: answer.output } : { ok: false, reason: "recall_failed" }
    }
    case "Defect":
    case "ClientProtocolError":
      return { ok: false, reason: "recall_failed" }
    default:
      return undefined
  }
}

export const askPromptRecall = (
  socketPath: string,
  request: PromptRecallRequest,
  deadlineMs: number
): Promise<RecallResult> =>
  new Promise((resolve) => {
    let settled = false
    let buffer = ""
    const socket = Net.createConnection({ path: socketPath })
    const done = (result: RecallResult) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      resolve(result)
    }
    const timer = setTimeout(() => done({ ok: false, reason: "recall_timeout" }), deadlineMs)
    socket.setEncoding("utf8")
    socket.on("error", () => done({ ok: false, reason: "recall_unavailable" }))
    socket.on("close", () => done({ ok: false, reason: "recall_unavailable" }))
    socket.on("data", (chunk: string) => {
      buffer += chunk
      let newline = buffer.indexOf("\n")
      while (newline !== -1) {
        const result = judgeLine(buffer.slice(0, newline))
        if (result !== undefined) return done(result)
        buffer = buffer.slice(newline + 1)
        newline = buffer.indexOf("\n")
      }
      if (buffer.length > MAX_LINE_CHARS) done({ ok: false, reason: "recall_failed" })
    })
    socket.write(promptRecallFrame(request))
  })
