import { Context } from "effect"
import type { GlobalFlags } from "./global-flags.js"
import { wantsColor } from "./output-choice.js"

/** How this invocation talks to its caller: decided once from flags and the terminal. */
export class OutputMode extends Context.Tag("blctx/OutputMode")<
  OutputMode,
  {
    readonly json: boolean
    /** Colors and animation: only on a TTY, without `--no-color` and without `NO_COLOR`. */
    readonly color: boolean
    /** A person is at the keyboard (stdin and stdout are TTYs, not `--json`). */
    readonly interactive: boolean
  }
>() {}

/**
 * The output mode from the global flags, the terminal and the environment. `NO_COLOR` turns
 * colors off when it is set to anything but the empty string (https://no-color.org).
 */
export const decideOutputMode = (input: {
  readonly flags: GlobalFlags
  readonly stdoutTty: boolean
  readonly stdinTty: boolean
  readonly noColorEnv: string | undefined
}): Context.Tag.Service<OutputMode> => ({
  json: input.flags.json,
  color: wantsColor(input.flags, {
    stdoutTty: input.stdoutTty,
    columns: undefined,
    env: { NO_COLOR: input.noColorEnv }
  }),
  interactive: !input.flags.json && input.stdoutTty && input.stdinTty
})
