#!/usr/bin/env node
import { VERSION } from "../src/version.js"

// `blctx --version` is answered before anything else loads, so it costs a bare Node start; every
// other command loads the CLI (a separate chunk of the bundle) on demand.
const args = process.argv.slice(2)
if (args.length === 1 && args[0] === "--version") {
  process.stdout.write(`${VERSION}\n`)
} else {
  const [{ ServiceManagerLive }, { runCli }] = await Promise.all([
    import("../layers/supervisor-selection.js"),
    import("./cli-main.js")
  ])
  // The product's blctx: the machine's own service manager supervises blctxd (never a fake).
  runCli({ entryUrl: import.meta.url, serviceManager: ServiceManagerLive })
}
