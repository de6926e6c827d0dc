import { Context } from "effect"

/** How this invocation talks to its caller: decided once from flags and the terminal. */
export class OutputMode extends Context.Tag("blctx/OutputMode")<
  OutputMode,
  {
    readonly json: boolean
    /** Colors and animation: only on a TTY and without `--no-color`. */
    readonly color: boolean
    /** A person is at the keyboard (stdin and stdout are TTYs, not `--json`). */
    readonly interactive: boolean
  }
>() {}
