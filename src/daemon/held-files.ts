import { Context, Data, Effect, Layer, Option, Ref } from "effect"
import { SafeFs, type StatEntry } from "../fs/safe-fs.js"
import { DaemonProcess } from "./daemon-process.js"

/** Device and inode: together they name one file, whatever path reaches it. */
export interface FileIdentity {
  readonly dev: number
  readonly ino: number
}

/** A file the daemon holds open or bound, recorded right after it opened, wrote or bound it. */
interface Held {
  readonly what: string
  readonly path: string
  readonly entry: StatEntry
  /** Removed at once when the daemon stops for a replaced file (the socket: no new caller reaches it). */
  readonly removeOnStop: boolean
}

/**
 * A file the daemon holds was removed or replaced at its path: what it writes there would not be
 * found by the next daemon, so it refuses and stops. Says what to do.
 */
export class HeldFileReplaced extends Data.TaggedError("HeldFileReplaced")<{
  readonly path: string
  readonly reason: string
}> {
  override get message() {
    return `${this.reason}; blctxd is stopping (nothing was written): retry, and the next call starts a fresh blctxd on what is at ${this.path} now`
  }
}

/**
 * What is at `path` now against the file held: none when it is the same file (the same device and
 * inode, whatever else changed: a new hard link, a write), otherwise why not. A failed `lstat` (a
 * transient error, a permission) tells nothing, so it is not a change: only a definite answer stops
 * the daemon.
 */
export const changeOf = (path: string, held: FileIdentity, what = "file") =>
  Effect.flatMap(SafeFs, (fs) => Effect.either(fs.lstat(path))).pipe(
    Effect.map((now) => {
      if (now._tag === "Left") return Option.none<string>()
      if (Option.isNone(now.right)) return Option.some(`the ${what} blctxd holds was removed from ${path}`)
      const entry = now.right.value
      return entry.dev === held.dev && entry.ino === held.ino
        ? Option.none<string>()
        : Option.some(`the ${what} blctxd holds was replaced by another file at ${path}`)
    })
  )

/**
 * The files that make this daemon the one its paths name: the database (and its WAL) it opened,
 * the pidfile it wrote, the socket it bound. Each is recorded as it is taken; `check` compares
 * them with what their paths hold now. On the first difference the daemon stops (the same graceful
 * path as a SIGTERM), removing its socket at once so no new caller reaches it, and every later
 * check fails the same way: a write is refused, never confirmed, and the next call starts a fresh
 * daemon (withDaemon) on the files at the paths.
 */
export class HeldFiles extends Context.Tag("blctx/HeldFiles")<
  HeldFiles,
  {
    /** Records what is at `path` now as held; false when nothing is there (nothing to compare). */
    readonly hold: (what: string, path: string, options?: { readonly removeOnStop?: boolean }) => Effect.Effect<boolean>
    /** Fails once a held file was removed or replaced; from then on, the daemon is stopping. */
    readonly check: Effect.Effect<void, HeldFileReplaced>
  }
>() {}

export const HeldFilesLive = Layer.effect(
  HeldFiles,
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const process = yield* DaemonProcess
    const held = yield* Ref.make<ReadonlyArray<Held>>([])
    const stopped = yield* Ref.make(Option.none<HeldFileReplaced>())

    const hold = (what: string, path: string, options: { readonly removeOnStop?: boolean } = {}) =>
      fs.lstat(path).pipe(
        Effect.orElseSucceed(() => Option.none<StatEntry>()),
        Effect.flatMap(
          Option.match({
            onNone: () => Effect.succeed(false),
            onSome: (entry) =>
              Ref.update(held, (all) => [
                ...all.filter((h) => h.path !== path),
                { what, path, entry, removeOnStop: options.removeOnStop ?? false }
              ]).pipe(Effect.as(true))
          })
        )
      )

    /** Removes `h` only while it is still the file held: a successor's socket is left alone. */
    const removeIfHeld = (h: Held) =>
      Effect.flatMap(changeOf(h.path, h.entry), (change) =>
        Option.isNone(change) ? Effect.ignore(fs.removeFile(h.path)) : Effect.void
      ).pipe(Effect.provideService(SafeFs, fs))

    /** The first held file (in the order held) that changed; the paths are read concurrently. */
    const firstChange = Effect.flatMap(Ref.get(held), (all) =>
      Effect.forEach(
        all,
        (h) =>
          Effect.map(
            changeOf(h.path, h.entry, h.what),
            Option.map((reason) => new HeldFileReplaced({ path: h.path, reason }))
          ),
        { concurrency: "unbounded" }
      ).pipe(Effect.map((changes) => Option.firstSomeOf(changes)))
    )

    const stop = (replaced: HeldFileReplaced) =>
      Effect.gen(function* () {
        const first = yield* Ref.modify(stopped, (s) => [
          Option.isNone(s),
          Option.isSome(s) ? s : Option.some(replaced)
        ])
        if (!first) return
        yield* Effect.logWarning("blctxd stopping by itself").pipe(Effect.annotateLogs({ reason: replaced.reason }))
        yield* Effect.forEach(
          (yield* Ref.get(held)).filter((h) => h.removeOnStop),
          removeIfHeld,
          { discard: true }
        )
        yield* process.requestStop
      })

    const check: Effect.Effect<void, HeldFileReplaced> = Effect.gen(function* () {
      const already = yield* Ref.get(stopped)
      if (Option.isSome(already)) return yield* already.value
      const change = yield* firstChange
      if (Option.isNone(change)) return
      yield* stop(change.value)
      return yield* change.value
    }).pipe(Effect.provideService(SafeFs, fs))

    return { hold, check }
  })
)
