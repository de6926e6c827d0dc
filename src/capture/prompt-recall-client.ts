import * as v from "valibot"
import type { PromptRecallRequest, PromptRecallResponse } from "../retrieval/prompt-recall.js"
import { type ExchangeOutcome, requestLine, rpcExchangeRetryingBusy } from "./rpc-exchange.js"

/**
 * The hook's one question to blctxd: `PromptRecall`, sent as a raw @effect/rpc NDJSON frame over
 * the daemon's socket (`rpc-exchange.ts`), because loading the RPC stack (and `effect`) would cost
 * the hook more start-up time than the whole answer may take. Only types come from the contract
 * (erased at build). One hard deadline covers connecting and answering: no answer in
 * time, a failure or any error means no recall, never a longer wait.
 */

/** What the hook reads of an answer; the encoded PromptRecallResponse fits it (checked below). */
export const RecallAnswer = v.looseObject({
  query_mode: v.string(),
  hits: v.array(
    v.looseObject({
      text: v.string(),
      source: v.variant("kind", [
        v.looseObject({
          kind: v.literal("transcript_span"),
          agent: v.optional(v.string()),
          path: v.string(),
          line: v.number()
        }),
        v.looseObject({ kind: v.literal("note_revision"), note_id: v.string(), revision: v.number() })
      ]),
      // Optional: an answer from a daemon older than these fields still reads.
      source_type: v.optional(v.string()),
      agent: v.optional(v.nullable(v.string())),
      session_id: v.nullable(v.string()),
      timestamp: v.nullable(v.string()),
      role: v.string(),
      relevance: v.number()
    })
  ),
  // A date phrase in the prompt bounded the recall: its note says how (absent from older daemons).
  time_filter: v.optional(v.looseObject({ note: v.string() }))
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
/** An answer is a few kilobytes; a line this long is not one. */
const MAX_LINE_CHARS = 1_048_576

export type RecallResult =
  | { readonly ok: true; readonly answer: RecallAnswer }
  | { readonly ok: false; readonly reason: "recall_timeout" | "recall_unavailable" | "recall_failed" }

export const promptRecallFrame = (request: PromptRecallRequest): string =>
  requestLine({ tag: PROMPT_RECALL_TAG, payload: request })

/** The hook tells apart only a timeout and no daemon; every other failure is `recall_failed`. */
const recallResultOf = (outcome: ExchangeOutcome): RecallResult => {
  switch (outcome._tag) {
    case "Success": {
      const answer = v.safeParse(RecallAnswer, outcome.value)
      return answer.success ? { ok: true, answer: answer.output } : { ok: false, reason: "recall_failed" }
    }
    case "Timeout":
      return { ok: false, reason: "recall_timeout" }
    case "Unavailable":
      return { ok: false, reason: "recall_unavailable" }
    case "ErrorAnswer":
    case "MalformedAnswer":
      return { ok: false, reason: "recall_failed" }
  }
}

export const askPromptRecall = (
  socketPath: string,
  request: PromptRecallRequest,
  deadlineMs: number
): Promise<RecallResult> =>
  rpcExchangeRetryingBusy(
    socketPath,
    { tag: PROMPT_RECALL_TAG, payload: request },
    { deadlineMs, maxLineChars: MAX_LINE_CHARS }
  ).then(recallResultOf)
