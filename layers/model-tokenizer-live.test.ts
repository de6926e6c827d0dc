import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { ChunkTokenizer } from "../src/chunking/chunk-tokenizer.js"
import { ConfigFile } from "../src/config/config-file.js"
import { activeModelFolder } from "../src/embedding/model-location.js"
import { Paths, resolvePaths } from "../src/paths/paths.js"
import {
  testModelData,
  tinyModelConfig,
  tinyModelFiles,
  tinyModelSources,
  tinyModelSpec
} from "../testing/model-test-folder.js"
import { ChunkTokenizerLive, toUtf16Spans } from "./model-tokenizer-live.js"
import { NodeSafeFsLive } from "./node-safe-fs.js"

const data = testModelData()

describe("toUtf16Spans", () => {
  it("keeps offsets of text without astral characters and shifts them past each emoji", () => {
    expect(
      toUtf16Spans("ab cd", [
        [0, 2],
        [3, 5]
      ])
    ).toEqual([
      [0, 2],
      [3, 5]
    ])
    // "😀" is one code point but two UTF-16 units.
    expect(
      toUtf16Spans("😀 ab 😀😀 c", [
        [0, 1],
        [2, 4],
        [5, 6],
        [6, 7],
        [8, 9]
      ])
    ).toEqual([
      [0, 2],
      [3, 5],
      [6, 8],
      [8, 10],
      [11, 12]
    ])
  })
})

describe("ChunkTokenizerLive: the tokenizer of the installed model (BLCTX_TEST_MODEL_DATA)", () => {
  it.scoped.skipIf(!data)("reads tokenizer.json from the active model folder, and fails when it is missing", () =>
    Effect.gen(function* () {
      const home = yield* Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(NodePath.join(tmpdir(), "blctx-tokenizer-"))),
        (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
      )
      const paths = resolvePaths({ home })
      mkdirSync(paths.configDir, { recursive: true })
      writeFileSync(
        NodePath.join(paths.configDir, "config.json"),
        JSON.stringify(tinyModelConfig(data ?? "", "http://127.0.0.1:9"))
      )
      const layer = ChunkTokenizerLive.pipe(
        Layer.provide(ConfigFile.Default),
        Layer.provideMerge(Layer.merge(NodeSafeFsLive, Layer.succeed(Paths, Paths.make(paths))))
      )
      const missing = yield* Effect.flip(Effect.scoped(Layer.build(layer)))
      expect(missing._tag).toBe("TokenizerError")

      const folder = activeModelFolder(paths.cacheDir, tinyModelSpec(tinyModelFiles(data ?? "")))
      mkdirSync(folder, { recursive: true })
      for (const { name, source } of tinyModelSources(data ?? "")) copyFileSync(source, NodePath.join(folder, name))
      const tokenizer = Context.get(yield* Layer.build(layer), ChunkTokenizer)
      expect(yield* tokenizer.spans("Hello, wörld 😀!")).toEqual([
        [0, 5],
        [5, 6],
        [7, 12],
        [13, 15],
        [15, 16]
      ])
    })
  )
})
