#!/usr/bin/env node
import { VERSION } from "../src/version.js"

// `blctx --version` is answered before anything else loads, so it costs a bare Node start. A
// `search` it fully understands is tried on the effect-free fast path (src/cli/fast-search.ts, a
// small chunk of the bundle); every other command, and every search the fast path cannot answer
// (any failure but a daemon silent past the deadline), loads the CLI (a separate chunk) on demand.
const args = process.argv.slice(2)
if (args.length === 1 && args[0] === "--version") {
  process.stdout.write(`${VERSION}\n`)
} else {
  // Deliberately silent: whatever goes wrong on the fast path, the full CLI answers (and reports).
  const fast = args.includes("search")
    ? await import("../src/cli/fast-search.js")
        .then((m) =>
          m.fastSearch(args, process.env, { isTTY: process.stdout.isTTY === true, columns: process.stdout.columns })
        )
        .catch(() => undefined)
    : undefined
  if (fast !== undefined) {
    process.stdout.write(fast.stdout)
    if (fast.stderr !== "") process.stderr.write(fast.stderr)
    process.exitCode = fast.exitCode
  } else {
    const [{ ServiceManagerLive }, { runCli }] = await Promise.all([
      import("../layers/supervisor-selection.js"),
      import("./cli-main.js")
    ])
    // The product's blctx: the machine's own service manager supervises blctxd (never a fake).
    runCli({ entryUrl: import.meta.url, serviceManager: ServiceManagerLive })
  }
}
