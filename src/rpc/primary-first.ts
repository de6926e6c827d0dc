import { Effect } from "effect"

/**
 * Routing over two readers: a primary that alone can answer some reads (it keeps state the
 * others do not, such as the vector matrix) and an overflow pool. `onPrimary` always runs on
 * the primary; `onAny` runs on the primary while it is free, else on the overflow pool, so an
 * idle daemon needs one reader and a long read never queues another behind it.
 */
export const makePrimaryFirst = <C>(primary: C, overflow: C) => {
  let running = 0
  const onPrimary = <A, E, R>(read: (reader: C) => Effect.Effect<A, E, R>) =>
    Effect.acquireUseRelease(
      Effect.sync(() => running++),
      () => read(primary),
      () => Effect.sync(() => running--)
    )
  const onAny = <A, E, R>(read: (reader: C) => Effect.Effect<A, E, R>) =>
    Effect.suspend(() => (running === 0 ? onPrimary(read) : read(overflow)))
  return { onPrimary, onAny }
}
