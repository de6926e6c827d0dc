import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { NodeSafeFsLive } from "../../layers/node-safe-fs.js"
import { checkOwnership } from "./ownership.js"

const isRoot = process.getuid?.() === 0
/** A user id that is nobody on this machine: only root can hand files to it. */
const OTHER_USER = 54_321

let base: string
beforeEach(() => {
  base = Fs.realpathSync(Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-own-")))
})
afterEach(() => Fs.rmSync(base, { recursive: true, force: true }))

const check = (path: string) => checkOwnership(path).pipe(Effect.provide(NodeSafeFsLive), Effect.flip)
const passes = (path: string) => checkOwnership(path).pipe(Effect.provide(NodeSafeFsLive))

describe("checkOwnership", () => {
  it.effect("accepts a private folder of one's own, existing or not yet created", () =>
    Effect.gen(function* () {
      const dir = NodePath.join(base, "data", "blctx")
      yield* passes(dir)
      Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
      yield* passes(dir)
    })
  )

  it.effect("accepts a world-writable parent with the sticky bit (like /tmp)", () =>
    Effect.gen(function* () {
      const shared = NodePath.join(base, "shared")
      Fs.mkdirSync(shared)
      Fs.chmodSync(shared, 0o1777)
      const dir = NodePath.join(shared, "blctx")
      Fs.mkdirSync(dir, { mode: 0o700 })
      yield* passes(dir)
    })
  )

  it.effect("refuses a world-writable parent without the sticky bit, naming it", () =>
    Effect.gen(function* () {
      const open = NodePath.join(base, "open")
      Fs.mkdirSync(open)
      Fs.chmodSync(open, 0o777)
      const problem = yield* check(NodePath.join(open, "blctx", "context.db"))
      expect(problem._tag).toBe("OwnershipProblem")
      if (problem._tag !== "OwnershipProblem") return
      expect(problem.detail).toContain(`${open}, above`)
      expect(problem.detail).toContain("sticky bit")
      expect(problem.remediation).toContain("chmod +t")
    })
  )

  it.effect("judges the real folder behind a linked ancestor", () =>
    Effect.gen(function* () {
      const real = NodePath.join(base, "real")
      Fs.mkdirSync(real)
      Fs.chmodSync(real, 0o777)
      const link = NodePath.join(base, "link")
      Fs.symlinkSync(real, link)
      const problem = yield* check(NodePath.join(link, "blctx"))
      expect(problem._tag).toBe("OwnershipProblem")
      if (problem._tag === "OwnershipProblem") expect(problem.detail).toContain(real)
    })
  )

  it.effect.skipIf(!isRoot)("(as root) refuses a folder another user created, even with mode 0700", () =>
    Effect.gen(function* () {
      const dir = NodePath.join(base, "blctx")
      Fs.mkdirSync(dir, { mode: 0o700 })
      Fs.chownSync(dir, OTHER_USER, OTHER_USER)
      const problem = yield* check(dir)
      expect(problem._tag).toBe("OwnershipProblem")
      if (problem._tag === "OwnershipProblem") expect(problem.detail).toContain(`belongs to user ${OTHER_USER}`)
    })
  )

  it.effect.skipIf(!isRoot)("(as root) refuses a parent owned by another user", () =>
    Effect.gen(function* () {
      const theirs = NodePath.join(base, "theirs")
      Fs.mkdirSync(theirs, { mode: 0o755 })
      Fs.chownSync(theirs, OTHER_USER, OTHER_USER)
      const problem = yield* check(NodePath.join(theirs, "blctx"))
      expect(problem._tag).toBe("OwnershipProblem")
      if (problem._tag === "OwnershipProblem") expect(problem.detail).toContain(`owned by user ${OTHER_USER}`)
    })
  )

  it.effect.skipIf(!isRoot)(
    "(as root) refuses a link another user owns in a sticky folder, even to a folder of one's own",
    () =>
      Effect.gen(function* () {
        const shared = NodePath.join(base, "shared")
        Fs.mkdirSync(shared)
        Fs.chmodSync(shared, 0o1777)
        const mine = NodePath.join(base, "mine")
        Fs.mkdirSync(mine, { mode: 0o700 })
        const link = NodePath.join(shared, "data")
        Fs.symlinkSync(mine, link)
        Fs.lchownSync(link, OTHER_USER, OTHER_USER)
        for (const path of [NodePath.join(link, "blctx"), NodePath.join(link, "blctx", "context.db")]) {
          const problem = yield* check(path)
          expect(problem._tag).toBe("OwnershipProblem")
          if (problem._tag !== "OwnershipProblem") continue
          expect(problem.detail).toContain(`${link} is a symbolic link owned by user ${OTHER_USER}`)
          expect(problem.remediation).toContain(link)
        }
      })
  )

  it.effect.skipIf(!isRoot)("(as root) refuses a link met inside another link's target", () =>
    Effect.gen(function* () {
      const shared = NodePath.join(base, "shared")
      Fs.mkdirSync(shared)
      Fs.chmodSync(shared, 0o1777)
      const mine = NodePath.join(base, "mine")
      Fs.mkdirSync(mine, { mode: 0o700 })
      const inner = NodePath.join(shared, "inner")
      Fs.symlinkSync(mine, inner)
      Fs.lchownSync(inner, OTHER_USER, OTHER_USER)
      // An outer link of one's own whose target text passes through the foreign link.
      const outer = NodePath.join(base, "outer")
      Fs.symlinkSync(NodePath.join(inner, "."), outer)
      const problem = yield* check(NodePath.join(outer, "blctx"))
      expect(problem._tag).toBe("OwnershipProblem")
      if (problem._tag === "OwnershipProblem") expect(problem.detail).toContain(`${inner} is a symbolic link`)
    })
  )

  it.effect.skipIf(!isRoot)("(as root) accepts one's own link in a sticky folder to a folder of one's own", () =>
    Effect.gen(function* () {
      const shared = NodePath.join(base, "shared")
      Fs.mkdirSync(shared)
      Fs.chmodSync(shared, 0o1777)
      const mine = NodePath.join(base, "mine")
      Fs.mkdirSync(mine, { mode: 0o700 })
      const link = NodePath.join(shared, "data")
      Fs.symlinkSync(mine, link)
      yield* passes(NodePath.join(link, "blctx"))
    })
  )

  it.effect.skipIf(!isRoot)("(as root) refuses one's own link to a folder another user owns", () =>
    Effect.gen(function* () {
      const theirs = NodePath.join(base, "theirs")
      Fs.mkdirSync(theirs, { mode: 0o755 })
      Fs.chownSync(theirs, OTHER_USER, OTHER_USER)
      const link = NodePath.join(base, "home")
      Fs.symlinkSync(theirs, link)
      const problem = yield* check(NodePath.join(link, "hooks.json"))
      expect(problem._tag).toBe("OwnershipProblem")
      if (problem._tag === "OwnershipProblem") expect(problem.detail).toContain(`${theirs}, above`)
    })
  )
})
