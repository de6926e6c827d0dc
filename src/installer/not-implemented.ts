import { Effect } from "effect"
import type { StepId } from "../domain/step-id.js"
import { fail, type Step } from "./step.js"

/**
 * A registered step whose capability has not been built yet: install and verify report failed,
 * never passed; uninstall has nothing to remove, since this version never installs anything for it.
 */
export const notImplementedStep = (id: StepId, title: string, requires: ReadonlyArray<StepId>): Step => {
  const notYet = Effect.fail(
    fail("not implemented yet", `The ${id} step is not available in this version of blctx; upgrade when it ships.`)
  )
  return {
    id,
    title,
    requires,
    install: () => notYet,
    verify: () => notYet,
    uninstall: () => Effect.succeed({ detail: "nothing to remove: this version of blctx never installs it" })
  }
}
