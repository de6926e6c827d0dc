import { type Rpc, RpcGroup } from "@effect/rpc"
import type { Schema } from "effect"
import { withShortDecodeErrors } from "../domain/decode-issues.js"

type AnyRpc = Rpc.Rpc<string, Schema.Schema.AnyNoContext, Schema.Schema.AnyNoContext, Schema.Schema.AnyNoContext>

/**
 * A group whose request payloads fail decoding with a short, redacted message. @effect/rpc
 * answers a request it cannot decode with `TreeFormatter`'s text, which holds the whole value
 * given (a 100,000-character query came back whole, credentials included). (The client's own
 * check before sending, the payload's `make`, validates the type side without this message: the
 * CLI formats what it throws itself.) The procedures are otherwise unchanged:
 * same tags, so the same handlers serve them.
 */
export const withShortRequestErrors = <G extends RpcGroup.Any>(group: G): G =>
  RpcGroup.make(
    ...[...(group as unknown as RpcGroup.RpcGroup<AnyRpc>).requests.values()].map((rpc) =>
      rpc.setPayload(withShortDecodeErrors(rpc.payloadSchema) as never)
    )
  ) as unknown as G
