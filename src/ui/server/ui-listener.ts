import type { HttpApp } from "@effect/platform"
import { Context, Data, type Effect, type Scope } from "effect"

export class UiListenError extends Data.TaggedError("UiListenError")<{
  readonly port: number
  readonly message: string
}> {}

/**
 * Serves an HTTP app on 127.0.0.1 (never another address) for the life of the scope; port 0
 * lets the system choose. Answers the port it is bound to. Closing the scope closes the
 * listener and every connection it holds.
 */
export class UiListener extends Context.Tag("blctx/UiListener")<
  UiListener,
  {
    readonly listen: (
      port: number,
      app: HttpApp.Default<never, Scope.Scope>
    ) => Effect.Effect<number, UiListenError, Scope.Scope>
  }
>() {}
