import { Context, type Effect } from "effect"

/** Asks a person a yes/no question. Only used when the run is interactive. */
export class Prompter extends Context.Tag("blctx/Prompter")<
  Prompter,
  {
    readonly confirm: (question: string, defaultYes: boolean) => Effect.Effect<boolean>
  }
>() {}
