import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { DEFAULT_MODEL_SPEC } from "../src/domain/model-spec.js"
import { Embedder } from "../src/embedding/embedder.js"
import { fingerprintOf } from "../src/embedding/fingerprint.js"
import { cosine } from "../src/embedding/pooling.js"
import { checkModel } from "../src/embedding/sanity.js"
import { FakeEmbedderLive, fakeModelSpec, makeFakeEmbedder } from "./fake-model.js"

describe("fake model", () => {
  it.effect("gives deterministic unit vectors of the spec's dimension, similar for shared words", () =>
    Effect.gen(function* () {
      const embedder = yield* Embedder
      const [a, b, c, empty] = yield* embedder.embed(
        ["undo the last git commit", "git commit undo", "bananas are yellow", ""],
        "passage"
      )
      const [again] = yield* embedder.embed(["undo the last git commit"], "query")
      expect(a).toHaveLength(384)
      expect([...(again ?? [])]).toEqual([...(a ?? [])])
      expect(Math.hypot(...(a ?? []))).toBeCloseTo(1, 5)
      expect(Math.hypot(...(empty ?? []))).toBeCloseTo(1, 5)
      expect(cosine(a ?? new Float32Array(), b ?? new Float32Array())).toBeGreaterThan(
        cosine(a ?? new Float32Array(), c ?? new Float32Array())
      )
    }).pipe(Effect.provide(FakeEmbedderLive()))
  )

  it.effect("has its own fingerprint, counts its work, and passes the default sanity check", () =>
    Effect.gen(function* () {
      const { embedder, stats } = makeFakeEmbedder(fakeModelSpec(16))
      expect(embedder.fingerprint.key).not.toBe(fingerprintOf(DEFAULT_MODEL_SPEC).key)
      expect(embedder.dims).toBe(16)
      yield* embedder.embed(["a", "b"], "passage")
      expect(stats).toEqual({ texts: 2, calls: 1 })
      const { embedder: wide } = makeFakeEmbedder()
      expect((yield* checkModel(wide, fakeModelSpec())).first).toBe(DEFAULT_MODEL_SPEC.sanity.expected_first)
    })
  )
})
