import { Effect } from "effect"

/**
 * Lets Node's event loop run once: sockets, timers and worker-thread messages that waited behind
 * synchronous work are handled, then the fiber goes on.
 *
 * `Effect.yieldNow()` is not enough. Effect's scheduler resumes a fiber that yields on the
 * microtask queue (a timer only after 2,048 yields in a row), and Node drains that queue before
 * it looks at any I/O; better-sqlite3 statements and parsing are synchronous, so a fiber doing
 * only those would keep the daemon from accepting a connection or answering one until it awaits
 * real I/O. `setImmediate` runs after the loop's I/O phase, so whatever is waiting goes first.
 */
export const yieldToEventLoop: Effect.Effect<void> = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/** What a unit of work costs a pace on top of its size: a row's statements are never free. */
export const PACE_COST_PER_ITEM = 1024

/**
 * How much synchronous work (in bytes of text handled, plus `PACE_COST_PER_ITEM` per item) runs
 * between two turns of the event loop. About 64 messages of a transcript, or one message of
 * 64 KiB: a few milliseconds of inserts, FTS updates or redaction.
 */
export const PACE_BUDGET = 64 * 1024

/**
 * Paces a long run of synchronous steps: `step(bytes, items)` after each piece of work yields to
 * the event loop (`yieldToEventLoop`) once the work since the last yield costs `budget`. Counted,
 * never timed, so the same work yields at the same places on any machine.
 */
export const makePace = (budget: number = PACE_BUDGET) => {
  let spent = 0
  return (bytes: number, items = 1): Effect.Effect<void> =>
    Effect.suspend(() => {
      spent += items * PACE_COST_PER_ITEM + bytes
      if (spent < budget) return Effect.void
      spent = 0
      return yieldToEventLoop
    })
}
