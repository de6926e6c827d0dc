import { Effect, Schedule, type Scope } from "effect"

/** How often the worker that keeps the vector matrix reads what was written since. */
const MATRIX_CATCH_UP = "5 seconds"

/**
 * Runs `warm` now and then every 5 s for the life of the scope, so the first search after an
 * import does not read every row written since (at 900k rows that took seconds). A failed catch-up
 * is left to the next one (a search reports its own failure). Scoped, never a daemon fiber: the
 * loop ends with its worker, which must not be kept alive by its timer.
 */
export const keepMatrixCurrent = <E, R>(
  warm: Effect.Effect<unknown, E, R>
): Effect.Effect<void, never, R | Scope.Scope> =>
  Effect.asVoid(Effect.forkScoped(Effect.repeat(Effect.ignore(warm), Schedule.spaced(MATRIX_CATCH_UP))))
