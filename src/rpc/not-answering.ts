import * as Fs from "node:fs"
import * as NodePath from "node:path"

/**
 * What a client says when blctxd accepted the connection but gave no answer by the deadline: the
 * process is there (stopped with SIGSTOP, hung, or overloaded), so starting another would not help
 * and waiting longer would only hang the caller. Effect-free: the RPC client and the CLI search
 * fast path (`src/cli/fast-search.ts`) share the words.
 */

/** One deadline for every call to the daemon, connect to answer: reads answer within this. */
export const CALL_DEADLINE_MS = 5_000

/** The PID blctxd recorded beside its socket (`blctxd.pid` in the state directory), if readable. */
export const recordedPidBeside = (socketPath: string): number | undefined => {
  try {
    const text = Fs.readFileSync(NodePath.join(NodePath.dirname(socketPath), "blctxd.pid"), "utf8").trim()
    return /^[1-9][0-9]{0,9}$/.test(text) ? Number(text) : undefined
  } catch {
    return undefined
  }
}

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
