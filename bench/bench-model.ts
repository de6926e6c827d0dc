import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import * as NodePath from "node:path"
import { promisify } from "node:util"
import { TOKENIZER_FILES } from "../testing/model-test-folder.js"
import { type ModelServer, startModelServer } from "../testing/model-test-server.js"

const run = promisify(execFile)

/** Where the benchmarks find an encoder of bge-small-en's exact size (random weights). */
export const BENCH_MODEL_ENV = "BLCTX_BENCH_MODEL_DIR"
export const benchModelDir = (): string | undefined => process.env[BENCH_MODEL_ENV] || undefined

/** A model folder: the ONNX file plus bge-small-en's tokenizer files, all as bytes. */
export interface ModelFolderBytes {
  readonly repo: string
  readonly dims: number
  readonly files: ReadonlyArray<{ readonly name: string; readonly bytes: Buffer }>
}

/** A model folder on disk (the ONNX file and the tokenizer files beside it). */
export const readModelFolder = (dir: string, repo: string, dims: number, tokenizerDir = dir): ModelFolderBytes => ({
  repo,
  dims,
  files: [
    { name: "model_optimized.onnx", bytes: readFileSync(NodePath.join(dir, "model_optimized.onnx")) },
    ...TOKENIZER_FILES.map((name) => ({ name, bytes: readFileSync(NodePath.join(tokenizerDir, name)) }))
  ]
})

/**
 * The config.json `model` override for a folder served at `endpoint`: every file with its size
 * and SHA-256, no prefixes, and an identity sanity check (random weights cannot rank by
 * meaning, so the query is one of the passages).
 */
export const modelConfigFor = (folder: ModelFolderBytes, endpoint: string) => ({
  model: {
    endpoint,
    repo: folder.repo,
    revision: "bench",
    dims: folder.dims,
    files: folder.files.map((f) => ({
      name: f.name,
      size: f.bytes.length,
      sha256: createHash("sha256").update(f.bytes).digest("hex")
    })),
    prefixes: { query: "", passage: "" },
    sanity: {
      query: "undo the last git commit",
      passages: ["bananas are yellow", "undo the last git commit", "the eiffel tower is in paris"],
      expected_first: 1
    }
  }
})

/**
 * Installs `folder` into the throwaway HOME behind `env` the way a person's machine gets a model:
 * a loopback server in the Hugging Face layout, config.json naming it, and the normal
 * `embedding_model` step (download, hashes, load, sanity check). Returns the server to close.
 */
export const installBenchModel = async (
  cli: string,
  home: string,
  env: NodeJS.ProcessEnv,
  folder: ModelFolderBytes
): Promise<ModelServer> => {
  const server = await startModelServer({ repo: folder.repo, revision: "bench", files: folder.files })
  const configDir = NodePath.join(home, ".config", "blctx")
  mkdirSync(configDir, { recursive: true, mode: 0o700 })
  writeFileSync(NodePath.join(configDir, "config.json"), JSON.stringify(modelConfigFor(folder, server.endpoint)))
  await run(process.execPath, [cli, "install", "codex", "--step", "embedding_model", "--json"], {
    env,
    maxBuffer: 16 * 1024 * 1024
  })
  return server
}
