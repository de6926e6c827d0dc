import { type Duration, Effect, ExecutionStrategy, Exit, Fiber, Option, Ref, Scope, SynchronizedRef } from "effect"

/**
 * A resource opened again once it has sat idle after a use that grew it. Made for ONNX Runtime's
 * session, whose arena keeps the memory of its largest run for the session's life: after
 * indexing, a daemon that only embeds short queries would otherwise hold ~90 MiB it no longer
 * needs (bge-small-en's size). Closing and opening the session gives that memory back; nothing
 * else can (onnxruntime-node passes no run options, so the arena cannot be asked to shrink).
 */
export interface IdleRecycler<R, E> {
  /**
   * Runs `f` with the resource. `grows` marks a use that may grow its retained memory: `idle`
   * after the last such use ends, the resource is closed, then opened again. Uses run
   * concurrently with each other, never with the reopening (they wait for it).
   */
  readonly use: <A, E2>(grows: boolean, f: (resource: R) => Effect.Effect<A, E2>) => Effect.Effect<A, E | E2>
}

/** Uses take one permit, the reopening takes them all. */
const PERMITS = 1 << 20

/**
 * Opens the resource now (its failure fails this effect) in a child of the current scope; closing
 * that scope closes the resource and stops any pending reopening. A failed reopening is logged
 * and retried by the next use, whose failure is then the opening's.
 */
export const makeIdleRecycler = <R, E>(
  open: Effect.Effect<R, E, Scope.Scope>,
  options: { readonly idle: Duration.DurationInput; readonly name: string }
): Effect.Effect<IdleRecycler<R, E>, E, Scope.Scope> =>
  Effect.gen(function* () {
    const outer = yield* Effect.scope
    const openInChild = Effect.gen(function* () {
      const scope = yield* Scope.fork(outer, ExecutionStrategy.sequential)
      const resource = yield* open.pipe(
        Scope.extend(scope),
        Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause)))
      )
      return { scope, resource }
    })
    const held = yield* SynchronizedRef.make(Option.some(yield* openInChild))
    const permits = yield* Effect.makeSemaphore(PERMITS)
    const pending = yield* Ref.make(Option.none<Fiber.RuntimeFiber<void>>())
    const growing = yield* Ref.make(0)

    // Closed first, then opened: the two never hold their memory at the same time.
    const reopen = Effect.gen(function* () {
      const started = Date.now()
      const previous = yield* SynchronizedRef.get(held)
      if (Option.isSome(previous)) yield* Scope.close(previous.value.scope, Exit.void)
      const reopened = yield* Effect.either(openInChild)
      if (reopened._tag === "Left") {
        yield* Effect.logWarning(`${options.name} closed after idle; opening it again failed`).pipe(
          Effect.annotateLogs({ error: String(reopened.left) })
        )
        yield* SynchronizedRef.set(held, Option.none())
        return
      }
      yield* SynchronizedRef.set(held, Option.some(reopened.right))
      yield* Effect.logInfo(`${options.name} closed and opened again after idle, giving back its working memory`).pipe(
        Effect.annotateLogs({ took_ms: Date.now() - started })
      )
    })

    // Waiting for the permits can be interrupted (a new growing use restarts the wait); the
    // reopening itself cannot.
    const reopenWhenIdle = Effect.sleep(options.idle).pipe(
      Effect.zipRight(permits.withPermits(PERMITS)(Effect.uninterruptible(reopen)))
    )

    const cancelPending = Effect.flatMap(Ref.getAndSet(pending, Option.none()), (fiber) =>
      Option.isSome(fiber) ? Fiber.interrupt(fiber.value) : Effect.void
    )
    // Scheduled from a use's release, which cannot be interrupted: the wait itself must be.
    const schedule = Effect.gen(function* () {
      const next = yield* Effect.forkIn(Effect.interruptible(reopenWhenIdle), outer)
      const previous = yield* Ref.getAndSet(pending, Option.some(next))
      if (Option.isSome(previous)) yield* Fiber.interrupt(previous.value)
    })

    // Counted so that the idle time starts when the last of several concurrent growing uses ends.
    const startGrowing = Effect.zipRight(
      Ref.update(growing, (n) => n + 1),
      cancelPending
    )
    const endGrowing = Effect.flatMap(
      Ref.updateAndGet(growing, (n) => n - 1),
      (left) => (left === 0 ? schedule : Effect.void)
    )

    const resource = SynchronizedRef.modifyEffect(held, (current) =>
      Option.isSome(current)
        ? Effect.succeed([current.value.resource, current] as const)
        : Effect.map(openInChild, (opened) => [opened.resource, Option.some(opened)] as const)
    )

    const use = <A, E2>(grows: boolean, f: (resource: R) => Effect.Effect<A, E2>): Effect.Effect<A, E | E2> =>
      grows
        ? Effect.acquireUseRelease(
            startGrowing,
            () => permits.withPermits(1)(Effect.flatMap(resource, f)),
            () => endGrowing
          )
        : permits.withPermits(1)(Effect.flatMap(resource, f))

    return { use }
  })
