import * as Fs from "node:fs"
import { Effect, Layer } from "effect"
import { NodeSafeFsLive } from "../../layers/node-safe-fs.js"
import { SafeFs } from "./safe-fs.js"

/**
 * The live SafeFs, except that the `call`-th `lstat` of `path` (or, with `after: "read"`, the
 * `call`-th verified read of it) answers what it saw and then runs `swap` before returning:
 * whatever blctx does next with the path happens after the swap, exactly between its check and
 * its use. The swap runs once.
 */
export const swappingSafeFs = (options: {
  readonly path: string
  readonly call?: number
  readonly after?: "lstat" | "read"
  readonly swap: () => void
}) =>
  Layer.effect(
    SafeFs,
    Effect.map(SafeFs, (live) => {
      let calls = 0
      const swapAfter =
        (kind: "lstat" | "read", path: string) =>
        <A, E>(effect: Effect.Effect<A, E>) =>
          effect.pipe(
            Effect.tap(() =>
              Effect.sync(() => {
                if (path === options.path && (options.after ?? "lstat") === kind && ++calls === (options.call ?? 1)) {
                  options.swap()
                }
              })
            )
          )
      return SafeFs.of({
        ...live,
        lstat: (path) => live.lstat(path).pipe(swapAfter("lstat", path)),
        readOpened: (path, admit) => live.readOpened(path, admit).pipe(swapAfter("read", path))
      })
    })
  ).pipe(Layer.provide(NodeSafeFsLive))

/** Replaces `path` with a symbolic link to `target`. */
export const symlinkSwap = (path: string, target: string) => () => {
  Fs.rmSync(path, { force: true })
  Fs.symlinkSync(target, path)
}

/** Replaces `path` with a hard link to `target` (another name for the outside file's content). */
export const hardLinkSwap = (path: string, target: string) => () => {
  Fs.rmSync(path, { force: true })
  Fs.linkSync(target, path)
}

/** Gives `path` a second name, `alias`: the same file, now reachable from elsewhere. */
export const extraLinkSwap = (path: string, alias: string) => () => {
  Fs.linkSync(path, alias)
}

/** A file outside blctx's paths, with its bytes and mode, to prove it was never touched. */
export const outsideFile = (path: string, content = "outside: never blctx's\n", mode = 0o644) => {
  Fs.writeFileSync(path, content, { mode })
  Fs.chmodSync(path, mode)
  return {
    path,
    untouched: () => {
      const stats = Fs.statSync(path)
      return Fs.readFileSync(path, "utf8") === content && (stats.mode & 0o7777) === mode
    }
  }
}
