/**
 * blctx-hook: the lifecycle-hook handler of Codex and Claude Code (bundled alone as
 * dist/bin/blctx-hook.mjs). It runs at every session start, prompt and turn end, so its import
 * graph is Node's builtins, valibot and effect-free modules of src/capture, with their file system
 * (layers/node-hook-fs.ts), only
 * (scripts/bundle.mjs refuses anything else). It always exits 0, prints nothing or one whole
 * JSON document on stdout, and writes exactly one receipt line on stderr.
 */
import { writeSync } from "node:fs"
import { nodeHookFs } from "../layers/node-hook-fs.js"
import { runHook } from "../src/capture/hook-handler.js"
import { type ReceiptReason, receiptLine } from "../src/capture/hook-receipt.js"

// Everything the hook creates (bindings, spooled records, directories) is this user's alone.
process.umask(0o077)

let finished = false

/**
 * Writes to stdout (1) or stderr (2) with a plain write(2): `process.stdout`/`process.stderr` are
 * streams (a socket for a pipe), and loading Node's socket and stream modules would cost every
 * hook more start-up time than its own work. A descriptor that would block (a full non-blocking
 * pipe) falls back to the stream, which waits; a closed one (the agent gave up) is not our error.
 */
const write = async (fd: 1 | 2, text: string) => {
  let rest = Buffer.from(text)
  try {
    while (rest.length > 0) rest = rest.subarray(writeSync(fd, rest))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EAGAIN") return
    const stream = fd === 1 ? process.stdout : process.stderr
    stream.on("error", () => undefined)
    await new Promise<void>((resolve) => stream.write(rest, () => resolve()))
  }
}

const finish = async (event: string, reason: ReceiptReason, stdout?: string) => {
  if (finished) return
  finished = true
  if (stdout !== undefined) await write(1, `${stdout}\n`)
  await write(2, `${receiptLine(event, reason)}\n`)
  // Whatever is still pending (an unanswered socket, an open stdin) must not keep the agent waiting.
  process.exit(0)
}

const crashed = () => void finish(process.argv[2] ?? "", "internal_error")
process.on("uncaughtException", crashed)
process.on("unhandledRejection", crashed)

// stdin is read from its descriptor, for the same reason as `write`. The recall deadline counts
// from the end of Node's own start-up, before this bundle loaded: loading it comes out of the
// deadline, so the prompt hook costs at most a bare Node plus the deadline. Only a prompt's recall
// asks for that time, so the other events never load Node's performance timing.
runHook(
  process.argv.slice(2),
  nodeHookFs,
  () => new Date(),
  () => performance.nodeTiming.bootstrapComplete
).then((result) => finish(result.event, result.reason, result.stdout), crashed)
