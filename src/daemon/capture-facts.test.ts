import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { NodeSafeFsLive } from "../../layers/node-safe-fs.js"
import type { SafeFs } from "../fs/safe-fs.js"
import { ManifestStore } from "../ownership/manifest-store.js"
import { Paths } from "../paths/paths.js"
import { makeCaptureFacts } from "./capture-facts.js"

const withHome = <A, E>(use: (home: string) => Effect.Effect<A, E, ManifestStore | Paths | SafeFs>) =>
  Effect.suspend(() => {
    const home = Fs.realpathSync(Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-capture-facts-")))
    const layer = ManifestStore.Default.pipe(
      Layer.provideMerge(Paths.layerFrom({ home })),
      Layer.provideMerge(NodeSafeFsLive)
    )
    return use(home).pipe(
      Effect.provide(layer),
      Effect.ensuring(Effect.sync(() => Fs.rmSync(home, { recursive: true, force: true })))
    )
  })

describe("what the daemon knows of capture outside its database", () => {
  it.effect("counts the records waiting in the spool, not a writer's temp files; none without a spool", () =>
    withHome(() =>
      Effect.gen(function* () {
        const facts = yield* makeCaptureFacts
        expect(yield* facts.spoolRecords).toBe(0)
        Fs.mkdirSync(facts.spoolDir, { recursive: true })
        Fs.writeFileSync(NodePath.join(facts.spoolDir, "1000-1-aa.json"), "{}")
        Fs.writeFileSync(NodePath.join(facts.spoolDir, "2000-1-bb.json"), "{}")
        Fs.writeFileSync(NodePath.join(facts.spoolDir, ".3000-1-cc.json.tmp"), "{")
        expect(yield* facts.spoolRecords).toBe(2)
        // No manifest: no hooks registered, no current generation.
        expect(yield* facts.generations).toEqual([])
      })
    )
  )
})
