#!/usr/bin/env node
import { endQuietlyOnClosedStdout } from "../src/cli/closed-stdout.js"
import { extractGlobalFlags } from "../src/cli/global-flags.js"
import { pathBeforeNpmExec } from "../src/cli/npm-exec-path.js"
import { VERSION } from "../src/version.js"

// `npx blctx` is `blctx`: the agents' CLIs are looked up on the PATH the person had, not on the
// one npm exec starts us with (its node_modules/.bin folders first).
const personPath = pathBeforeNpmExec(process.env)
if (personPath !== undefined) process.env.PATH = personPath
// A reader that goes away (`blctx status | head -2`) ends every command quietly (exit 141).
endQuietlyOnClosedStdout()

// `blctx --version` is answered before anything else loads, so it costs a bare Node start. A
// `search` it fully understands is tried on the effect-free fast path (src/cli/fast-search.ts, a
// small chunk of the bundle); every other command, and every search the fast path cannot answer
// (any failure but a daemon silent past the deadline), loads the CLI (a separate chunk) on demand.
const args = process.argv.slice(2)
const { flags, rest } = extractGlobalFlags(args)
if (rest.length === 1 && rest[0] === "--version") {
  // As the full CLI prints it (`version` in cli-main.ts): one JSON document with --json.
  process.stdout.write(flags.json ? `${JSON.stringify({ version: VERSION }, null, 2)}\n` : `${VERSION}\n`)
} else {
  // Deliberately silent: whatever goes wrong on the fast path, the full CLI answers (and reports).
  const fast = args.includes("search")
    ? await Promise.all([import("../src/cli/fast-search.js"), import("../layers/node-hook-fs.js")])
        .then(([m, { nodeHookFs }]) =>
          m.fastSearch(
            args,
            process.env,
            { isTTY: process.stdout.isTTY === true, columns: process.stdout.columns },
            nodeHookFs
          )
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
