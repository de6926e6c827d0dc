import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import type { SafeFs } from "../fs/safe-fs.js"
import { extraLinkSwap, outsideFile, swappingSafeFs, symlinkSwap } from "../fs/swapping-safe-fs.test-support.js"
import { pathInputs, useActiveHome } from "../installer/steps/service-steps.test-support.js"
import { Paths } from "../paths/paths.js"
import { ManifestStore } from "./manifest-store.js"

const fresh = useActiveHome()

const withStore = <A, E>(safeFs: Layer.Layer<SafeFs>, use: (store: ManifestStore) => Effect.Effect<A, E>) =>
  Effect.flatMap(ManifestStore, use).pipe(
    Effect.provide(
      ManifestStore.Default.pipe(Layer.provide(Paths.layerFrom(pathInputs(fresh.home()))), Layer.provide(safeFs))
    )
  )

const outside = () => outsideFile(NodePath.join(fresh.home(), "outside.json"), '{"version":1,"not":"blctx\'s"}\n')

describe("ManifestStore between check and use", () => {
  it.effect("read refuses a manifest replaced by a symbolic link after its checks", () =>
    Effect.gen(function* () {
      const path = fresh.paths().manifest
      const target = outside()
      // The second lstat of the manifest is checkOwnership's, the last check before the read.
      const error = yield* withStore(swappingSafeFs({ path, call: 2, swap: symlinkSwap(path, target.path) }), (s) =>
        Effect.flip(s.read())
      )
      expect(error).toMatchObject({
        _tag: "ManifestUnreadable",
        reason: "it was replaced by a symbolic link between check and use"
      })
      expect(target.untouched()).toBe(true)
    })
  )

  it.effect("read refuses a manifest that gained a second hard link after its checks", () =>
    Effect.gen(function* () {
      const path = fresh.paths().manifest
      const alias = NodePath.join(fresh.home(), "alias.json")
      const error = yield* withStore(swappingSafeFs({ path, call: 2, swap: extraLinkSwap(path, alias) }), (s) =>
        Effect.flip(s.read())
      )
      expect(error).toMatchObject({ reason: "it gained a second hard link between check and use" })
    })
  )

  it.effect("write refuses a manifest swapped for a link, writing nothing through it", () =>
    Effect.gen(function* () {
      const path = fresh.paths().manifest
      const target = outside()
      const error = yield* withStore(swappingSafeFs({ path, call: 3, swap: symlinkSwap(path, target.path) }), (s) =>
        Effect.gen(function* () {
          const m = Option.getOrThrow(yield* s.read())
          return yield* Effect.flip(s.write(m))
        })
      )
      expect(error).toMatchObject({ _tag: "PathSwapped", path, swap: "symbolic_link" })
      expect(target.untouched()).toBe(true)
    })
  )

  it.effect("remove refuses a manifest swapped for a link; the target survives", () =>
    Effect.gen(function* () {
      const path = fresh.paths().manifest
      const target = outside()
      const error = yield* withStore(swappingSafeFs({ path, swap: symlinkSwap(path, target.path) }), (s) =>
        Effect.flip(s.remove())
      )
      expect(error).toMatchObject({ _tag: "PathSwapped", swap: "symbolic_link" })
      expect(target.untouched()).toBe(true)
      expect(Fs.lstatSync(path).isSymbolicLink()).toBe(true)
    })
  )
})
