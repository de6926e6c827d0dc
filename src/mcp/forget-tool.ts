import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Schema } from "effect"
import { ForgetPreviewResponse, ForgetResponse, ForgetSelector, MAX_TOKEN_CHARS } from "../forget/forget-contract.js"
import { defineTool, type McpTool } from "./tools.js"

/**
 * The one tool that removes: not read-only, destructive (what it removes is gone), not
 * idempotent (a token confirms once), closed-world (only blctx's own store). Clients ask the
 * person before calling a destructive tool; the description asks the agent to as well.
 */
export const FORGET_TOOL_ANNOTATIONS = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: false
} as const satisfies ToolAnnotations

export const ForgetToolRequest = Schema.Struct({
  selector: ForgetSelector.annotations({
    description:
      "Exactly one of: note (a note id), context_session (a context_session_id), file (a transcript's absolute path), session (an agent session id), project (an absolute directory), or since/until (a time range; at least one)."
  }),
  token: Schema.optional(
    Schema.String.pipe(Schema.maxLength(MAX_TOKEN_CHARS)).annotations({
      description:
        "Leave out to preview. Pass the token of the preview of this same selector, after the person confirmed it, to forget."
    })
  )
})
export type ForgetToolRequest = typeof ForgetToolRequest.Type

/** Either stage's answer in one object: `preview` for a call without a token, `forgotten` for one with it. */
export const McpForgetResponse = Schema.Struct({
  preview: Schema.NullOr(ForgetPreviewResponse),
  forgotten: Schema.NullOr(ForgetResponse)
})

export const forgetTool: McpTool = defineTool(
  {
    name: "forget",
    title: "Forget part of the person's coding history",
    description: [
      "Permanently remove part of the person's blctx history: a note, a blctx session's notes, a transcript file, an agent session, a project, or a time range.",
      "Use it only when the person asks to forget something.",
      "Call it first without `token`: nothing is removed, and the answer's `preview` shows what would be (counts by source and the first items with their citations) and a `token` valid for 10 minutes.",
      "Show the person that preview and get their explicit confirmation; only then call again with the same `selector` and that `token`. The answer's `forgotten` gives the counts removed.",
      "A wrong or expired token, or a selection that changed since the preview, removes nothing (forget_token_mismatch, forget_token_expired): preview again.",
      "Forgotten text is gone from search, recent and context, and from the database file; importing the transcript again does not bring it back."
    ].join(" "),
    input: ForgetToolRequest,
    output: McpForgetResponse,
    run: (client, request) =>
      request.token === undefined
        ? Effect.map(client.ForgetPreview({ selector: request.selector }), (preview) => ({ preview, forgotten: null }))
        : Effect.map(client.Forget({ selector: request.selector, token: request.token }), (forgotten) => ({
            preview: null,
            forgotten
          }))
  },
  FORGET_TOOL_ANNOTATIONS
)
