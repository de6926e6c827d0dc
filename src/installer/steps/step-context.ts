import { Effect } from "effect"
import type { Step, StepFailure, StepOutcome, StepRun } from "../step.js"

/** A step's effects written at module level, each asking for the services it uses. */
export interface StepEffects<R> {
  readonly install: (run: StepRun) => Effect.Effect<StepOutcome, StepFailure, R>
  readonly verify: (run: StepRun) => Effect.Effect<StepOutcome, StepFailure, R>
  readonly diagnose?: (run: StepRun) => Effect.Effect<StepOutcome, StepFailure, R>
  readonly uninstall: (run: StepRun) => Effect.Effect<StepOutcome, StepFailure, R>
}

type NeedsOf<F> = F extends (run: StepRun) => Effect.Effect<StepOutcome, StepFailure, infer R> ? R : never

/** The services a step's effects need, together. */
export type StepNeeds<D extends StepEffects<unknown>> =
  | NeedsOf<D["install"]>
  | NeedsOf<D["verify"]>
  | NeedsOf<D["diagnose"]>
  | NeedsOf<D["uninstall"]>

/** A built step; one given `diagnose` keeps it required, so callers need not check for it. */
export type BuiltStep<D> = Step<never> &
  (D extends { readonly diagnose: unknown } ? { readonly diagnose: NonNullable<Step<never>["diagnose"]> } : unknown)

/**
 * Builds a step from effects that need services, providing the services the step was built
 * with: so a step's parts are named functions a reader follows one by one, instead of closures
 * inside one long generator, and the engine still sees a step that needs nothing.
 */
export const stepWithServices = <D extends StepEffects<unknown>>(
  about: Pick<Step, "id" | "title" | "requires">,
  effects: D
): Effect.Effect<BuiltStep<D>, never, StepNeeds<D>> =>
  Effect.map(Effect.context<StepNeeds<D>>(), (context) => {
    const provided =
      (f: (run: StepRun) => Effect.Effect<StepOutcome, StepFailure, StepNeeds<D>>) =>
      (run: StepRun): Effect.Effect<StepOutcome, StepFailure> =>
        Effect.provide(f(run), context)
    const diagnose = effects.diagnose as
      | ((run: StepRun) => Effect.Effect<StepOutcome, StepFailure, StepNeeds<D>>)
      | undefined
    const step: Step<never> = {
      ...about,
      install: provided(effects.install as (run: StepRun) => Effect.Effect<StepOutcome, StepFailure, StepNeeds<D>>),
      verify: provided(effects.verify as (run: StepRun) => Effect.Effect<StepOutcome, StepFailure, StepNeeds<D>>),
      ...(diagnose === undefined ? {} : { diagnose: provided(diagnose) }),
      uninstall: provided(effects.uninstall as (run: StepRun) => Effect.Effect<StepOutcome, StepFailure, StepNeeds<D>>)
    }
    return step as BuiltStep<D>
  })
