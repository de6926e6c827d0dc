import { describe, expect, it } from "@effect/vitest"
import { DEFAULT_MODEL_SPEC, ModelFile, ModelSpec, modelFileUrl } from "../domain/model-spec.js"
import { fingerprintOf } from "./fingerprint.js"

describe("model fingerprint", () => {
  const base = fingerprintOf(DEFAULT_MODEL_SPEC)

  it("records model, revision, dims, pooling, prefix policy and file hashes", () => {
    expect(base.model).toBe("Qdrant/bge-small-en")
    expect(base.revision).toBe("8791246cc2a79c7949a4dc0d4a018cbd7d024879")
    expect(base.dims).toBe(384)
    expect(base.pooling).toBe("cls")
    expect(base.prefixes).toEqual({ query: "query: ", passage: "passage: " })
    expect(base.files.map((f) => f.name)).toEqual([
      "config.json",
      "model_optimized.onnx",
      "special_tokens_map.json",
      "tokenizer.json",
      "tokenizer_config.json",
      "vocab.txt"
    ])
    // Pinned: a change here silently orphans every stored vector, so it must be deliberate.
    expect(base.key).toBe("e42255a3e551366f")
    expect(base.label).toBe(`Qdrant/bge-small-en@8791246cc2a7#${base.key}`)
  })

  it("is stable, ignores the endpoint, and changes with anything that changes the vectors", () => {
    expect(fingerprintOf(new ModelSpec({ ...DEFAULT_MODEL_SPEC })).key).toBe(base.key)
    expect(fingerprintOf(new ModelSpec({ ...DEFAULT_MODEL_SPEC, endpoint: "https://mirror.example" })).key).toBe(
      base.key
    )
    const changed = [
      new ModelSpec({ ...DEFAULT_MODEL_SPEC, revision: "main" }),
      new ModelSpec({ ...DEFAULT_MODEL_SPEC, dims: 383 }),
      new ModelSpec({ ...DEFAULT_MODEL_SPEC, prefixes: { query: "", passage: "" } }),
      new ModelSpec({
        ...DEFAULT_MODEL_SPEC,
        files: [
          new ModelFile({ ...DEFAULT_MODEL_SPEC.files[0], sha256: "0".repeat(64) }),
          ...DEFAULT_MODEL_SPEC.files.slice(1)
        ]
      })
    ]
    for (const spec of changed) expect(fingerprintOf(spec).key).not.toBe(base.key)
  })

  it("serves files from the Hugging Face resolve layout of the endpoint", () => {
    expect(modelFileUrl(DEFAULT_MODEL_SPEC, "vocab.txt")).toBe(
      "https://huggingface.co/Qdrant/bge-small-en/resolve/8791246cc2a79c7949a4dc0d4a018cbd7d024879/vocab.txt"
    )
    expect(
      modelFileUrl(new ModelSpec({ ...DEFAULT_MODEL_SPEC, endpoint: "http://127.0.0.1:8080/" }), "a.json")
    ).toMatch(/^http:\/\/127\.0\.0\.1:8080\/Qdrant\/bge-small-en\/resolve\//)
  })
})
