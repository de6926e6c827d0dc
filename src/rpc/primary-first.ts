import { Effect } from "effect"

/**
 * Routing over two readers: a primary that alone can answer some reads (it keeps state the
 * others do not, such as the vector matrix) and an overflow pool, got when first needed (it may
 * start then). `onPrimary` always runs on the primary; `onAny` runs on the primary while it is
 * free, else on the overflow pool, so an idle daemon needs one reader and a long read never
 * queues another behind it.
 */
export const makePrimaryFirst = <C, E2>(primary: C, overflow: Effect.Effect<C, E2>) => {
  let running = 0
  const onPrimary = <A, E, R>(read: (reader: C) => Effect.Effect<A, E, R>) =>
    Effect.acquireUseRelease(
      Effect.sync(() => running++),
      () => read(primary),
      () => Effect.sync(() => running--)
    )
  const onAny = <A, E, R>(read: (reader: C) => Effect.Effect<A, E, R>) =>
    Effect.suspend(() => (running === 0 ? onPrimary(read) : Effect.flatMap(overflow, read)))
  return { onPrimary, onAny }
}
