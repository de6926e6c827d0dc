/**
 * blctx-hook: the lifecycle-hook handler of Codex and Claude Code (bundled alone as
 * dist/bin/blctx-hook.mjs). It runs at every session start, prompt and turn end, so its import
 * graph is Node's builtins, valibot and effect-free modules of src/capture only
 * (scripts/bundle.mjs refuses anything else). It always exits 0, prints nothing or one whole
 * JSON document on stdout, and writes exactly one receipt line on stderr.
 */
import { runHook } from "../src/capture/hook-handler.js"
import { type ReceiptReason, receiptLine } from "../src/capture/hook-receipt.js"

// Everything the hook creates (bindings, spooled records, directories) is this user's alone.
process.umask(0o077)

let finished = false

const write = (stream: NodeJS.WriteStream, text: string) =>
  new Promise<void>((resolve) => {
    stream.write(text, () => resolve())
  })

const finish = async (event: string, reason: ReceiptReason, stdout?: string) => {
  if (finished) return
  finished = true
  if (stdout !== undefined) await write(process.stdout, `${stdout}\n`)
  await write(process.stderr, `${receiptLine(event, reason)}\n`)
  // Whatever is still pending (an unanswered socket, an open stdin) must not keep the agent waiting.
  process.exit(0)
}

// A closed stdout or stderr (the agent gave up) is not an error of ours.
process.stdout.on("error", () => undefined)
process.stderr.on("error", () => undefined)
const crashed = () => void finish(process.argv[2] ?? "", "internal_error")
process.on("uncaughtException", crashed)
process.on("unhandledRejection", crashed)

// The recall deadline counts from the end of Node's own start-up, before this bundle loaded: loading
// it comes out of the deadline, so the prompt hook costs at most a bare Node plus the deadline.
runHook(process.argv.slice(2), process.stdin, () => new Date(), performance.nodeTiming.bootstrapComplete).then(
  (result) => finish(result.event, result.reason, result.stdout),
  crashed
)
