import { randomBytes } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Downloader } from "../src/embedding/downloader.js"
import { HttpDownloaderLive } from "./http-downloader.js"
import { startModelServer } from "./model-test-server.js"

const scratch = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(NodePath.join(tmpdir(), "blctx-download-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)
const server = (options: Parameters<typeof startModelServer>[0]) =>
  Effect.acquireRelease(
    Effect.promise(() => startModelServer(options)),
    (s) => Effect.promise(() => s.close())
  )

const bytes = randomBytes(300_000)
const url = (endpoint: string, name = "model.onnx") => `${endpoint}/t/m/resolve/r1/${name}`

describe("HTTP downloader over a loopback server", () => {
  it.scoped("downloads a file into its .part path and reports progress", () =>
    Effect.gen(function* () {
      const dir = yield* scratch
      const s = yield* server({ repo: "t/m", revision: "r1", files: [{ name: "model.onnx", bytes }] })
      const part = NodePath.join(dir, "model.onnx.part")
      const seen: Array<number> = []
      const downloader = yield* Downloader
      const result = yield* downloader.fetch({
        url: url(s.endpoint),
        part,
        size: bytes.length,
        onProgress: (n) => Effect.sync(() => seen.push(n))
      })
      expect(result).toEqual({ resumedFrom: 0, bytesOnDisk: bytes.length })
      expect(readFileSync(part).equals(bytes)).toBe(true)
      expect(seen[0]).toBe(0)
      expect(seen.at(-1)).toBe(bytes.length)
      expect(s.requests.map((r) => [r.range, r.status])).toEqual([[undefined, 200]])
    }).pipe(Effect.provide(HttpDownloaderLive))
  )

  it.scoped("resumes with a Range request after the connection is cut mid-file", () =>
    Effect.gen(function* () {
      const dir = yield* scratch
      const s = yield* server({
        repo: "t/m",
        revision: "r1",
        files: [{ name: "model.onnx", bytes }],
        cutFirst: ["model.onnx"]
      })
      const part = NodePath.join(dir, "model.onnx.part")
      const downloader = yield* Downloader
      const request = { url: url(s.endpoint), part, size: bytes.length, onProgress: () => Effect.void }
      const error = yield* Effect.flip(downloader.fetch(request))
      expect(error.retryable).toBe(true)
      const kept = readFileSync(part)
      expect(kept.length).toBeGreaterThan(0)
      expect(kept.length).toBeLessThan(bytes.length)
      expect(kept.equals(bytes.subarray(0, kept.length))).toBe(true)

      const result = yield* downloader.fetch(request)
      expect(result).toEqual({ resumedFrom: kept.length, bytesOnDisk: bytes.length })
      expect(readFileSync(part).equals(bytes)).toBe(true)
      expect(s.requests.map((r) => [r.range, r.status])).toEqual([
        [undefined, 200],
        [`bytes=${kept.length}-`, 206]
      ])
    }).pipe(Effect.provide(HttpDownloaderLive))
  )

  it.scoped("follows redirects, and does nothing for a .part that is already complete", () =>
    Effect.gen(function* () {
      const dir = yield* scratch
      const s = yield* server({ repo: "t/m", revision: "r1", files: [{ name: "model.onnx", bytes }], redirect: true })
      const part = NodePath.join(dir, "model.onnx.part")
      const downloader = yield* Downloader
      const request = { url: url(s.endpoint), part, size: bytes.length, onProgress: () => Effect.void }
      yield* downloader.fetch(request)
      expect(readFileSync(part).equals(bytes)).toBe(true)
      expect(s.requests.map((r) => r.status)).toEqual([302, 200])
      expect(yield* downloader.fetch(request)).toEqual({ resumedFrom: bytes.length, bytesOnDisk: bytes.length })
      expect(s.requests).toHaveLength(2)
    }).pipe(Effect.provide(HttpDownloaderLive))
  )

  it.scoped("starts over when the .part is longer than the file, and fails on 404 without retrying", () =>
    Effect.gen(function* () {
      const dir = yield* scratch
      const s = yield* server({ repo: "t/m", revision: "r1", files: [{ name: "model.onnx", bytes }] })
      const part = NodePath.join(dir, "model.onnx.part")
      writeFileSync(part, Buffer.alloc(bytes.length + 10))
      const downloader = yield* Downloader
      yield* downloader.fetch({ url: url(s.endpoint), part, size: bytes.length, onProgress: () => Effect.void })
      expect(readFileSync(part).equals(bytes)).toBe(true)
      const missing = yield* Effect.flip(
        downloader.fetch({
          url: url(s.endpoint, "nope.json"),
          part: NodePath.join(dir, "nope.part"),
          size: 5,
          onProgress: () => Effect.void
        })
      )
      expect(missing.message).toBe("HTTP 404")
      expect(missing.retryable).toBe(false)
    }).pipe(Effect.provide(HttpDownloaderLive))
  )

  it.scoped("refuses a body larger than the expected size", () =>
    Effect.gen(function* () {
      const dir = yield* scratch
      const s = yield* server({ repo: "t/m", revision: "r1", files: [{ name: "model.onnx", bytes }] })
      const downloader = yield* Downloader
      const error = yield* Effect.flip(
        downloader.fetch({
          url: url(s.endpoint),
          part: NodePath.join(dir, "small.part"),
          size: 1000,
          onProgress: () => Effect.void
        })
      )
      expect(error.message).toContain("more than the expected 1000 bytes")
      expect(error.retryable).toBe(false)
    }).pipe(Effect.provide(HttpDownloaderLive))
  )
})
