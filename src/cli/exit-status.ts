import { Context, type Effect } from "effect"

/** The process exit code a command settles on (0 ok, 1 failed, 2 usage). */
export class ExitStatus extends Context.Tag("blctx/ExitStatus")<
  ExitStatus,
  { readonly set: (code: number) => Effect.Effect<void> }
>() {}
