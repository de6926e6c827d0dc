import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { NodeSafeFsLive } from "../../layers/node-safe-fs.js"
import { readVerified } from "./read-verified.js"
import { removeVerified } from "./remove-verified.js"
import { SafeFs, type StatEntry } from "./safe-fs.js"
import {
  extraLinkSwap,
  hardLinkSwap,
  outsideFile,
  swappingSafeFs,
  symlinkSwap
} from "./swapping-safe-fs.test-support.js"
import { writeReplacing } from "./write-replacing.js"

let dir: string
beforeEach(() => {
  dir = Fs.realpathSync(Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-check-to-use-")))
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

const owned = (name = "owned.json", content = "blctx's\n") => {
  const path = NodePath.join(dir, name)
  Fs.writeFileSync(path, content, { mode: 0o600 })
  return path
}

/** What a site does: lstat the path (its check), then `use` what it checked. */
const checkThen = <A, E>(path: string, use: (checked: Option.Option<StatEntry>) => Effect.Effect<A, E, SafeFs>) =>
  Effect.flatMap(SafeFs, (fs) => fs.lstat(path)).pipe(Effect.flatMap(use))

const checkedFile = (checked: Option.Option<StatEntry>) => Option.getOrThrow(checked)

describe("readVerified", () => {
  it.effect("reads the checked file through its descriptor", () =>
    Effect.gen(function* () {
      const path = owned("a.json", "\uFEFFwith a byte order mark\n")
      const text = yield* checkThen(path, (c) => readVerified(path, checkedFile(c))).pipe(
        Effect.provide(NodeSafeFsLive)
      )
      expect(text).toBe("\uFEFFwith a byte order mark\n")
    })
  )

  it.effect("refuses a file replaced by a symbolic link between check and use", () =>
    Effect.gen(function* () {
      const path = owned()
      const outside = outsideFile(NodePath.join(dir, "outside"))
      const error = yield* checkThen(path, (c) => readVerified(path, checkedFile(c))).pipe(
        Effect.flip,
        Effect.provide(swappingSafeFs({ path, swap: symlinkSwap(path, outside.path) }))
      )
      expect(error._tag).toBe("PathSwapped")
      expect(error.message).toBe(`${path} was replaced by a symbolic link between check and use; left untouched`)
      expect(outside.untouched()).toBe(true)
    })
  )

  it.effect("refuses a file replaced by a hard link to another file", () =>
    Effect.gen(function* () {
      const path = owned()
      const outside = outsideFile(NodePath.join(dir, "outside"))
      const error = yield* checkThen(path, (c) => readVerified(path, checkedFile(c))).pipe(
        Effect.flip,
        Effect.provide(swappingSafeFs({ path, swap: hardLinkSwap(path, outside.path) }))
      )
      expect(error).toMatchObject({ _tag: "PathSwapped", swap: "replaced" })
      expect(outside.untouched()).toBe(true)
    })
  )

  it.effect("refuses a file that gained a second hard link", () =>
    Effect.gen(function* () {
      const path = owned()
      const error = yield* checkThen(path, (c) => readVerified(path, checkedFile(c))).pipe(
        Effect.flip,
        Effect.provide(swappingSafeFs({ path, swap: extraLinkSwap(path, NodePath.join(dir, "alias")) }))
      )
      expect(error.message).toBe(`${path} gained a second hard link between check and use; left untouched`)
    })
  )
})

describe("writeReplacing", () => {
  it.effect("writes a checked file, and creates a checked absence, privately", () =>
    Effect.gen(function* () {
      const path = owned()
      const fresh = NodePath.join(dir, "fresh.json")
      yield* checkThen(path, (c) => writeReplacing(path, "new\n", 0o600, c)).pipe(Effect.provide(NodeSafeFsLive))
      yield* checkThen(fresh, (c) => writeReplacing(fresh, "fresh\n", 0o600, c)).pipe(Effect.provide(NodeSafeFsLive))
      expect(Fs.readFileSync(path, "utf8")).toBe("new\n")
      expect(Fs.statSync(fresh).mode & 0o777).toBe(0o600)
    })
  )

  it.effect("refuses a path swapped for a symbolic link, writing nothing through it", () =>
    Effect.gen(function* () {
      const path = owned()
      const outside = outsideFile(NodePath.join(dir, "outside"))
      const error = yield* checkThen(path, (c) => writeReplacing(path, "attack\n", 0o600, c)).pipe(
        Effect.flip,
        Effect.provide(swappingSafeFs({ path, swap: symlinkSwap(path, outside.path) }))
      )
      expect(error).toMatchObject({ _tag: "PathSwapped", swap: "symbolic_link" })
      expect(outside.untouched()).toBe(true)
      expect(Fs.lstatSync(path).isSymbolicLink()).toBe(true)
    })
  )

  it.effect("refuses a link that appeared where nothing was", () =>
    Effect.gen(function* () {
      const path = NodePath.join(dir, "absent.json")
      const outside = outsideFile(NodePath.join(dir, "outside"))
      const error = yield* checkThen(path, (c) => writeReplacing(path, "attack\n", 0o600, c)).pipe(
        Effect.flip,
        Effect.provide(swappingSafeFs({ path, swap: () => Fs.symlinkSync(outside.path, path) }))
      )
      expect(error).toMatchObject({ _tag: "PathSwapped", swap: "symbolic_link" })
      expect(outside.untouched()).toBe(true)
    })
  )

  it.effect("a link swapped in after the last check is replaced, never written through", () =>
    Effect.gen(function* () {
      const path = owned()
      const outside = outsideFile(NodePath.join(dir, "outside"))
      // The swap happens during writeReplacing's own confirmation: only the rename is left.
      yield* checkThen(path, (c) => writeReplacing(path, "new\n", 0o600, c)).pipe(
        Effect.provide(swappingSafeFs({ path, call: 2, swap: symlinkSwap(path, outside.path) }))
      )
      expect(outside.untouched()).toBe(true)
      expect(Fs.lstatSync(path).isFile()).toBe(true)
      expect(Fs.readFileSync(path, "utf8")).toBe("new\n")
    })
  )
})

describe("removeVerified", () => {
  it.effect("refuses a path swapped for a symbolic link; the target survives", () =>
    Effect.gen(function* () {
      const path = owned()
      const outside = outsideFile(NodePath.join(dir, "outside"))
      const error = yield* checkThen(path, (c) => removeVerified(path, checkedFile(c))).pipe(
        Effect.flip,
        Effect.provide(swappingSafeFs({ path, swap: symlinkSwap(path, outside.path) }))
      )
      expect(error).toMatchObject({ _tag: "PathSwapped", swap: "symbolic_link" })
      expect(outside.untouched()).toBe(true)
    })
  )

  it.effect("a link swapped in after the last check is unlinked itself; the target survives", () =>
    Effect.gen(function* () {
      const path = owned()
      const outside = outsideFile(NodePath.join(dir, "outside"))
      yield* checkThen(path, (c) => removeVerified(path, checkedFile(c))).pipe(
        Effect.provide(swappingSafeFs({ path, call: 2, swap: symlinkSwap(path, outside.path) }))
      )
      expect(Fs.existsSync(path)).toBe(false)
      expect(outside.untouched()).toBe(true)
    })
  )
})

describe("NodeSafeFsLive.makeDirectory", () => {
  it.effect("sets the mode through the directory itself, never through a link", () =>
    Effect.gen(function* () {
      const fs = yield* SafeFs
      const path = NodePath.join(dir, "made")
      yield* fs.makeDirectory(path, 0o700)
      expect(Fs.statSync(path).mode & 0o7777).toBe(0o700)
    }).pipe(Effect.provide(NodeSafeFsLive))
  )
})
