import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { DEFAULT_MODEL_SPEC } from "../domain/model-spec.js"
import { parseConfig } from "./config.js"

const PATH = "/home/me/.config/blctx/config.json"
const parse = (value: unknown) => parseConfig(typeof value === "string" ? value : JSON.stringify(value), PATH)
const error = (value: unknown) => {
  const result = parse(value)
  if (Either.isRight(result)) throw new Error("expected a ConfigError")
  return result.left
}

describe("config.json", () => {
  it("defaults every key: the pinned bge-small-en and the SQLite vector tables", () => {
    const config = Either.getOrThrow(parse({}))
    expect(config.model).toEqual(DEFAULT_MODEL_SPEC)
    expect(config.model.dims).toBe(384)
    expect(config.model.files).toHaveLength(6)
    expect(config.vectorStore).toEqual({ kind: "sqlite" })
    expect(config.modelOverrides).toEqual([])
    expect(config.source).toBe(PATH)
  })

  it("overrides only the model keys it names, e.g. a mirror endpoint", () => {
    const config = Either.getOrThrow(parse({ model: { endpoint: "https://mirror.example/hf" } }))
    expect(config.model.endpoint).toBe("https://mirror.example/hf")
    expect(config.modelOverrides).toEqual(["endpoint"])
    expect(config.model.repo).toBe("Qdrant/bge-small-en")
    expect(config.model.revision).toBe("8791246cc2a79c7949a4dc0d4a018cbd7d024879")
  })

  it("selects Qdrant with a URL and the name of the API key variable", () => {
    const config = Either.getOrThrow(
      parse({ vector_store: { kind: "qdrant", url: "http://qdrant.lan:6333", api_key_env: "QDRANT_API_KEY" } })
    )
    expect(config.vectorStore).toEqual({ kind: "qdrant", url: "http://qdrant.lan:6333", api_key_env: "QDRANT_API_KEY" })
  })

  it("names the field that is wrong", () => {
    expect(error({ model: { dims: "384" } })).toMatchObject({ field: "model.dims", path: PATH })
    expect(error({ model: { files: [{ name: "a", size: 1, sha256: "XYZ" }] } })).toMatchObject({
      field: "model.files.0.sha256",
      message: "must be 64 lowercase hex digits"
    })
    expect(error({ model: { files: [{ name: "../x", size: 1, sha256: "a".repeat(64) }] } }).field).toBe(
      "model.files.0.name"
    )
    expect(error({ vector_store: { kind: "qdrant", url: "ftp://x" } })).toMatchObject({
      field: "vector_store.url",
      message: "must be an http:// or https:// URL"
    })
    expect(error({ vector_store: { kind: "faiss" } }).field).toBe("vector_store.kind")
    expect(error({ modle: {} }).field).toBe("modle")
  })

  it("accepts prompt_recall settings within their bounds, and names the field out of them", () => {
    const settings = { enabled: false, deadline_ms: 300, limit: 5, min_relevance: 0.7 }
    expect(Either.isRight(parse({ prompt_recall: settings }))).toBe(true)
    expect(Either.isRight(parse({ prompt_recall: {} }))).toBe(true)
    expect(error({ prompt_recall: { deadline_ms: 5 } })).toMatchObject({
      field: "prompt_recall.deadline_ms",
      message: "must be an integer from 10 to 10000"
    })
    expect(error({ prompt_recall: { limit: 11 } }).field).toBe("prompt_recall.limit")
    expect(error({ prompt_recall: { limit: 2.5 } }).field).toBe("prompt_recall.limit")
    expect(error({ prompt_recall: { min_relevance: 1.5 } })).toMatchObject({
      field: "prompt_recall.min_relevance",
      message: "must be a number from 0 to 1"
    })
    expect(error({ prompt_recall: { enabled: "yes" } }).field).toBe("prompt_recall.enabled")
    expect(error({ prompt_recall: { deadline: 100 } }).field).toBe("prompt_recall.deadline")
  })

  it("refuses a file that is not JSON, saying so", () => {
    const e = error("{ model: ")
    expect(e.field).toBe("")
    expect(e.message).toMatch(/^not valid JSON/)
    expect(e.remediation).toBe(`Fix the file in ${PATH} (or move the file aside to use the defaults).`)
  })

  it("never quotes the file's text in a JSON error (it may hold a password in a URL)", () => {
    // V8 would say: Unexpected token 's', ..."dims": s3cret}}" is not valid JSON
    const e = error('{"model":{"endpoint":"https://mirror-user:pw@mirror.example/","dims": s3cret}}')
    expect(e.message).toBe("not valid JSON: Unexpected token 's'")
  })

  it("refuses file lists without the ONNX graph or with a name twice", () => {
    const file = { name: "tokenizer.json", size: 1, sha256: "a".repeat(64) }
    expect(error({ model: { files: [file] } })).toMatchObject({ field: "model.files" })
    expect(error({ model: { files: [file, file], onnx_file: "tokenizer.json" } }).message).toBe(
      '"tokenizer.json" is listed twice'
    )
    expect(error({ model: { sanity: { query: "q", passages: ["p"], expected_first: 3 } } }).field).toBe("model.sanity")
  })
})
