import { Duration, Effect, Layer } from "effect"
import { Admission } from "../rpc/admission.js"
import { daemonBusy } from "../rpc/errors.js"
import { ForwardedReads } from "../rpc/history-protocol.js"

/**
 * The reads that queue for the query workers: beyond the bound they are refused at once with
 * `DaemonBusy`, so a burst gets quick answers or a quick "busy" instead of a queue that times
 * every caller out. Ping, job status, context status (the installer's health reads), jobs and
 * writes are never refused: they are cheap, and a refused Ping would look like a dead daemon.
 */
export const SHEDDABLE_READS: ReadonlySet<string> = new Set([
  "Search",
  "PromptRecall",
  ...ForwardedReads.requests.keys()
])

/**
 * Reads in hand (running in a worker or queued for one) before the next is refused. Every
 * search goes to the one worker holding the vectors, so this is also the queue a search waits
 * in: small, so an admitted read is answered well within a client's 5 s deadline.
 */
export const MAX_READS_IN_HAND = 12

/**
 * An admitted read not answered within this is answered busy instead (and given up): on a starved
 * machine even a short queue can take seconds, and a busy answer, unlike silence, tells the
 * client that the daemon is there and working, so it can retry within its own deadline.
 */
export const MAX_READ_WAIT = Duration.seconds(2)

/** The admission middleware: counts sheddable reads in hand and refuses the one past `limit`. */
export const makeAdmission = (limit: number, maxWait: Duration.DurationInput = MAX_READ_WAIT) =>
  Effect.sync(() => {
    let inHand = 0
    return Admission.of(({ next, rpc }) => {
      if (!SHEDDABLE_READS.has(rpc._tag)) return next
      return Effect.suspend(() => {
        if (inHand >= limit) return Effect.fail(daemonBusy(inHand, limit))
        inHand++
        return next.pipe(
          Effect.timeoutFail({ duration: maxWait, onTimeout: () => daemonBusy(inHand, limit) }),
          Effect.ensuring(
            Effect.sync(() => {
              inHand--
            })
          )
        )
      })
    })
  })

export const AdmissionLive = Layer.effect(Admission, makeAdmission(MAX_READS_IN_HAND))
