import { Layer } from "effect"
import { withClient } from "../src/rpc/client.js"
import { DaemonConnector } from "../src/rpc/daemon-connector.js"

/** The protocol over the daemon's Unix socket (NDJSON @effect/rpc). */
export const DaemonConnectorLive = Layer.succeed(DaemonConnector, {
  withClient: (options, use) => withClient(options, use)
})
