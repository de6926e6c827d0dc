import type { SocketServer } from "@effect/platform"
import { Context, Data, type Effect, type Scope } from "effect"

export class SocketBindError extends Data.TaggedError("SocketBindError")<{
  readonly path: string
  readonly message: string
}> {}

/** Listens on a Unix socket path for the life of the scope (the file is created 0600). */
export class SocketBinder extends Context.Tag("blctx/SocketBinder")<
  SocketBinder,
  {
    readonly bind: (path: string) => Effect.Effect<SocketServer.SocketServer["Type"], SocketBindError, Scope.Scope>
  }
>() {}
