/**
 * A reader that goes away (`blctx status | head -2`) closes stdout under the program: the next
 * write fails with EPIPE, which Node reports as an `error` event on process.stdout, and with no
 * listener that is an uncaught exception with a stack. blctx ends quietly instead, with the
 * status a shell gives a writer killed by SIGPIPE (128 + 13), as `yes | head` does: the output was
 * cut short, which `set -o pipefail` scripts may want to know, and nothing is printed about it.
 * Effect-free: the entry point installs it before the fast path runs.
 */

/** 128 + SIGPIPE: the exit status of a program whose stdout reader went away. */
export const CLOSED_STDOUT_EXIT = 141

const guarded = new WeakSet<NodeJS.WritableStream>()

/** Whether `error` is a write to a pipe (or socket) whose reader has gone. */
export const isClosedPipe = (error: unknown): boolean =>
  typeof error === "object" && error !== null && (error as { code?: unknown }).code === "EPIPE"

/**
 * From now on, EPIPE on `stdout` ends the process with `CLOSED_STDOUT_EXIT`; any other write error
 * is still thrown. Installing it twice on one stream adds nothing.
 */
export const endQuietlyOnClosedStdout = (
  stdout: NodeJS.WritableStream = process.stdout,
  exit: (code: number) => void = (code) => process.exit(code)
): void => {
  if (guarded.has(stdout)) return
  guarded.add(stdout)
  stdout.on("error", (error: unknown) => {
    if (!isClosedPipe(error)) throw error
    exit(CLOSED_STDOUT_EXIT)
  })
}
