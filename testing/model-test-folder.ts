import { createHash } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { ModelFile, ModelSpec } from "../src/domain/model-spec.js"

/**
 * Test support for the tiny test model: the tokenizer files of bge-small-en plus a tiny random
 * encoder (8 dimensions), found through `BLCTX_TEST_MODEL_DATA` and never copied into the
 * project. Nothing in the product imports this file.
 */
export const TEST_MODEL_DATA_ENV = "BLCTX_TEST_MODEL_DATA"

/** Where the tiny model claims to come from (served by the loopback test server). */
export const TINY_REPO = "blctx-test/tiny-encoder"
export const TINY_REVISION = "test"

export const TOKENIZER_FILES = [
  "config.json",
  "special_tokens_map.json",
  "tokenizer.json",
  "tokenizer_config.json",
  "vocab.txt"
] as const

export const testModelData = (): string | undefined => process.env[TEST_MODEL_DATA_ENV] || undefined

/** Where each file of the tiny model folder comes from inside the test model data. */
export const tinyModelSources = (data: string): ReadonlyArray<{ readonly name: string; readonly source: string }> => [
  { name: "model_optimized.onnx", source: NodePath.join(data, "tiny-encoder", "model_optimized.onnx") },
  ...TOKENIZER_FILES.map((name) => ({ name, source: NodePath.join(data, "fast-bge-small-en", name) }))
]

/** Size and SHA-256 of every file of the tiny model, computed from the files themselves. */
export const tinyModelFiles = (data: string) =>
  tinyModelSources(data).map(({ name, source }) => {
    const bytes = readFileSync(source)
    return { name, size: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") }
  })

/** The real tokenizer of bge-small-en inside the test model data. */
export const testTokenizerPath = (data: string) => NodePath.join(data, "fast-bge-small-en", "tokenizer.json")

/** A temporary FastEmbed-style folder of symbolic links to the tiny model's files. */
export const tinyModelFolder = (data: string): { readonly folder: string; readonly dispose: () => void } => {
  const folder = mkdtempSync(NodePath.join(tmpdir(), "blctx-tiny-model-"))
  for (const { name, source } of tinyModelSources(data)) symlinkSync(source, NodePath.join(folder, name))
  return { folder, dispose: () => rmSync(folder, { recursive: true, force: true }) }
}

/**
 * A spec for the tiny model. Its vectors carry no meaning, so its sanity check is an identity
 * check (the same text as query and passage, no prefixes): it proves the pipeline is
 * consistent, not that retrieval is good.
 */
export const tinyModelSpec = (
  files: ReadonlyArray<{ readonly name: string; readonly size: number; readonly sha256: string }>,
  endpoint = "http://127.0.0.1:9"
) =>
  new ModelSpec({
    endpoint,
    repo: TINY_REPO,
    revision: TINY_REVISION,
    dims: 8,
    onnx_file: "model_optimized.onnx",
    files: files.map((f) => new ModelFile(f)) as unknown as readonly [ModelFile, ...Array<ModelFile>],
    pooling: "cls",
    normalize: "l2",
    max_tokens: 512,
    prefixes: { query: "", passage: "" },
    sanity: {
      query: "undo the last git commit",
      passages: ["bananas are yellow", "undo the last git commit", "the eiffel tower is in paris"],
      expected_first: 1
    }
  })

/** The tiny model's files as bytes, for a loopback server. */
export const tinyModelBytes = (data: string) =>
  tinyModelSources(data).map(({ name, source }) => ({ name, bytes: readFileSync(source) }))

/** A config.json `model` override that points blctx at the tiny model served from `endpoint`. */
export const tinyModelConfig = (data: string, endpoint: string) => {
  const spec = tinyModelSpec(tinyModelFiles(data), endpoint)
  return {
    model: {
      endpoint,
      repo: spec.repo,
      revision: spec.revision,
      dims: spec.dims,
      files: spec.files.map((f) => ({ name: f.name, size: f.size, sha256: f.sha256 })),
      prefixes: spec.prefixes,
      sanity: spec.sanity
    }
  }
}
