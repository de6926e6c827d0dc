/**
 * What a client says when blctxd accepted the connection but gave no answer by the deadline: the
 * process is there (stopped with SIGSTOP, hung, or overloaded), so starting another would not help
 * and waiting longer would only hang the caller. Effect-free and free of Node builtins: the RPC
 * client, the CLI search fast path (`src/cli/fast-search.ts`) and the viewer's page share the
 * words and the deadline.
 */

/** One deadline for every call to the daemon, connect to answer: reads answer within this. */
export const CALL_DEADLINE_MS = 5_000

export const notAnsweringReason = (pid: number | undefined) =>
  `blctxd (${pid === undefined ? "pid unknown" : `pid ${pid}`}) is not answering: it may be stopped or overloaded`

/**
 * Resume it, or end it and let the next command start a new one. Not `blctx install`: its service
 * step sees a socket that accepts connections and leaves the silent daemon running.
 */
export const notAnsweringRemediation = (pid: number | undefined) => {
  const n = pid ?? "<pid>"
  return `If it was stopped, resume it: \`kill -CONT ${n}\`; if it stays silent, end it (\`kill -9 ${n}\`) and run \`blctx ping\`, which starts it again.`
}
