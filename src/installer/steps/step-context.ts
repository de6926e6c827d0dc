import { type Context, Effect } from "effect"
import type { Step, StepFailure, StepOutcome, StepRun } from "../step.js"

/** A step's effects written at module level, each asking for the services it uses. */
export interface StepEffects<R> {
  readonly install: (run: StepRun) => Effect.Effect<StepOutcome, StepFailure, R>
  readonly verify: (run: StepRun) => Effect.Effect<StepOutcome, StepFailure, R>
  readonly diagnose?: (run: StepRun) => Effect.Effect<StepOutcome, StepFailure, R>
  readonly uninstall: (run: StepRun) => Effect.Effect<StepOutcome, StepFailure, R>
}

/**
 * Builds a step from effects that need services `R`, providing the services the step was built
 * with: so a step's parts are named functions a reader follows one by one, instead of closures
 * inside one long generator, and the engine still sees a step that needs nothing.
 */
export const stepWithServices = <R>(
  about: Pick<Step, "id" | "title" | "requires">,
  effects: StepEffects<R>
): Effect.Effect<Step<never>, never, R> =>
  Effect.map(Effect.context<R>(), (context: Context.Context<R>) => {
    const provided =
      <A>(f: (run: StepRun) => Effect.Effect<A, StepFailure, R>) =>
      (run: StepRun) =>
        Effect.provide(f(run), context)
    const diagnose = effects.diagnose
    return {
      ...about,
      install: provided(effects.install),
      verify: provided(effects.verify),
      ...(diagnose === undefined ? {} : { diagnose: provided(diagnose) }),
      uninstall: provided(effects.uninstall)
    }
  })
