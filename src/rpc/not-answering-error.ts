import { DaemonUnavailable } from "./errors.js"
import { notAnsweringReason, notAnsweringRemediation } from "./not-answering.js"
import { recordedPidBeside } from "./recorded-pid.js"

/**
 * Connected (or queued by the kernel) but no answer by the deadline: the process is there, silent.
 * Apart from `errors.ts` because it reads the PID file: the protocol's errors also reach the
 * viewer's browser bundle, which must carry no Node builtins.
 */
export const notAnswering = (socket: string) => {
  const pid = recordedPidBeside(socket)
  return new DaemonUnavailable({
    socket,
    reason: notAnsweringReason(pid),
    remediation: notAnsweringRemediation(pid),
    not_answering: true
  })
}
