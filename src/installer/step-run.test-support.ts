import { Effect } from "effect"
import type { StepRun } from "./step.js"

/** What the engine hands a step, for tests that call a step directly: defaults, then `over`. */
export const runOf = (command: StepRun["command"], over: Partial<StepRun> = {}): StepRun => ({
  command,
  purge: false,
  hooks: "install",
  progress: () => Effect.void,
  failedBefore: [],
  ...over
})
