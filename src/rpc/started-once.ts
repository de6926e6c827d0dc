import { Effect, Fiber, Scope } from "effect"

/**
 * `make`, started by the first caller in its own fiber in `scope` and joined by every caller: a
 * caller that gives up (its client went away) leaves the start running for the next, so a
 * half-started pool is never abandoned and started again. A failed start is forgotten, so the
 * next caller tries again.
 */
export const startedOnce = <A, E>(make: Effect.Effect<A, E, Scope.Scope>, scope: Scope.Scope): Effect.Effect<A, E> => {
  let started: Fiber.RuntimeFiber<A, E> | undefined
  const lock = Effect.unsafeMakeSemaphore(1)
  const start = lock.withPermits(1)(
    Effect.suspend(() =>
      started !== undefined
        ? Effect.succeed(started)
        : Effect.tap(Effect.forkIn(Scope.extend(make, scope), scope), (fiber) => {
            started = fiber
          })
    )
  )
  return Effect.flatMap(start, (fiber) =>
    Fiber.join(fiber).pipe(
      Effect.tapError(() =>
        Effect.sync(() => {
          if (started === fiber) started = undefined
        })
      )
    )
  )
}
