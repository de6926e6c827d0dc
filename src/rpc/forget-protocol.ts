import { Rpc, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"
import {
  ForgetPreviewRequest,
  ForgetPreviewResponse,
  ForgetRequest,
  ForgetResponse,
  ForgetTokenExpired,
  ForgetTokenMismatch,
  InvalidForgetSelector
} from "../forget/forget-contract.js"
import { DaemonStoreError } from "./errors.js"

// Forgetting: a preview that removes nothing and issues a token, and the confirmation that
// removes exactly what the preview listed. Shapes and refusals are defined once in src/forget.

/** What a selector would remove, with a token bound to it; removes nothing. */
export const ForgetPreview = Rpc.make("ForgetPreview", {
  payload: ForgetPreviewRequest,
  success: ForgetPreviewResponse,
  error: Schema.Union(InvalidForgetSelector, DaemonStoreError)
})

/** Removes what the token's preview listed, in one transaction, then scrubs the file. */
export const Forget = Rpc.make("Forget", {
  payload: ForgetRequest,
  success: ForgetResponse,
  error: Schema.Union(InvalidForgetSelector, ForgetTokenMismatch, ForgetTokenExpired, DaemonStoreError)
})

export class ForgetRpcs extends RpcGroup.make(ForgetPreview, Forget) {}
