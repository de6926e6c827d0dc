import { RpcMiddleware } from "@effect/rpc"
import { DaemonBusy } from "./errors.js"

/**
 * Admission control on every procedure of the daemon's protocol, declared once for the group
 * (`protocol.ts`): a procedure may fail with `DaemonBusy`, and the client and MCP see that in
 * their types. Which procedures can be refused, and the bound, live with the daemon's layer
 * (`src/daemon/admission.ts`).
 */
export class Admission extends RpcMiddleware.Tag<Admission>()("blctx/Admission", {
  failure: DaemonBusy,
  wrap: true
}) {}
