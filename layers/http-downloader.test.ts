import { randomBytes } from "node:crypto"
import { existsSync, linkSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option, TestClock } from "effect"
import { Downloader } from "../src/embedding/downloader.js"
import { startModelServer } from "../testing/model-test-server.js"
import { HttpDownloaderLive } from "./http-downloader.js"

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

  it.scoped("never writes a download through a link or a hard link at the .part path", () =>
    Effect.gen(function* () {
      const dir = yield* scratch
      const s = yield* server({ repo: "t/m", revision: "r1", files: [{ name: "model.onnx", bytes }] })
      const part = NodePath.join(dir, "model.onnx.part")
      const outside = NodePath.join(dir, "outside")
      writeFileSync(outside, "someone else's\n")
      const downloader = yield* Downloader
      const fetchPart = downloader.fetch({
        url: url(s.endpoint),
        part,
        size: bytes.length,
        onProgress: () => Effect.void
      })
      symlinkSync(outside, part)
      expect((yield* Effect.flip(fetchPart)).message).toContain("cannot write")
      rmSync(part)
      linkSync(outside, part)
      expect((yield* Effect.flip(fetchPart)).message).toContain("hard links")
      expect(readFileSync(outside, "utf8")).toBe("someone else's\n")
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

  it.scoped("refuses a file the server offers at another size, keeping nothing of it", () =>
    Effect.gen(function* () {
      const dir = yield* scratch
      const s = yield* server({ repo: "t/m", revision: "r1", files: [{ name: "model.onnx", bytes }] })
      const downloader = yield* Downloader
      const part = NodePath.join(dir, "small.part")
      const error = yield* Effect.flip(
        downloader.fetch({ url: url(s.endpoint), part, size: 1000, onProgress: () => Effect.void })
      )
      expect(error.message).toBe(
        `the server offers ${bytes.length} bytes where 1000 are expected: it is not the pinned file, and nothing of it was kept`
      )
      expect(error.retryable).toBe(false)
      expect(existsSync(part)).toBe(false)
    }).pipe(Effect.provide(HttpDownloaderLive))
  )

  it.scoped("refuses a resumed file whose total size is not the expected one, removing the partial file", () =>
    Effect.gen(function* () {
      const dir = yield* scratch
      const s = yield* server({ repo: "t/m", revision: "r1", files: [{ name: "model.onnx", bytes }] })
      const downloader = yield* Downloader
      const part = NodePath.join(dir, "m.part")
      writeFileSync(part, bytes.subarray(0, 100))
      const error = yield* Effect.flip(
        downloader.fetch({ url: url(s.endpoint), part, size: bytes.length - 1, onProgress: () => Effect.void })
      )
      expect(error.message).toContain(`the server offers ${bytes.length} bytes where ${bytes.length - 1} are expected`)
      expect(existsSync(part)).toBe(false)
    }).pipe(Effect.provide(HttpDownloaderLive))
  )

  it.scoped("resumes through a redirect, sending the Range header to the new host", () =>
    Effect.gen(function* () {
      const dir = yield* scratch
      const s = yield* server({
        repo: "t/m",
        revision: "r1",
        files: [{ name: "model.onnx", bytes }],
        cutFirst: ["model.onnx"],
        redirect: true
      })
      const part = NodePath.join(dir, "model.onnx.part")
      const downloader = yield* Downloader
      const request = { url: url(s.endpoint), part, size: bytes.length, onProgress: () => Effect.void }
      const cut = yield* Effect.flip(downloader.fetch(request))
      expect(cut.message).toMatch(/^the connection (was interrupted|closed) after \d+ of 300000 bytes/)
      const kept = readFileSync(part).length
      expect(yield* downloader.fetch(request)).toEqual({ resumedFrom: kept, bytesOnDisk: bytes.length })
      expect(readFileSync(part).equals(bytes)).toBe(true)
      expect(s.requests.map((r) => [r.range, r.status])).toEqual([
        [undefined, 302],
        [undefined, 200],
        [`bytes=${kept}-`, 302],
        [`bytes=${kept}-`, 206]
      ])
    }).pipe(Effect.provide(HttpDownloaderLive))
  )
})

/** A loopback server whose every answer is `respond`'s; `seen` resolves on the first request. */
const rawServer = (respond: (req: Http.IncomingMessage, res: Http.ServerResponse) => void) =>
  Effect.acquireRelease(
    Effect.gen(function* () {
      const seen = yield* Deferred.make<void>()
      const server = Http.createServer((req, res) => {
        Deferred.unsafeDone(seen, Effect.void)
        respond(req, res)
      })
      yield* Effect.async<void>((resume) => {
        server.listen(0, "127.0.0.1", () => resume(Effect.void))
      })
      return { server, seen, endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

describe("HTTP downloader bounds (Effect time)", () => {
  it.scoped("gives up on a server that never answers after 30 s, as a retryable failure", () =>
    Effect.gen(function* () {
      const dir = yield* scratch
      const s = yield* rawServer(() => {
        // never answers
      })
      const downloader = yield* Downloader
      const fiber = yield* Effect.fork(
        Effect.flip(
          downloader.fetch({
            url: url(s.endpoint),
            part: NodePath.join(dir, "m.part"),
            size: 10,
            onProgress: () => Effect.void
          })
        )
      )
      yield* Deferred.await(s.seen)
      const error = yield* passTimeUntilDone(fiber)
      expect(error.message).toBe("request failed: no answer for 30 s")
      expect(error.retryable).toBe(true)
    }).pipe(Effect.provide(HttpDownloaderLive))
  )

  it.scoped("gives up on a body that stops for 30 s, keeping what arrived", () =>
    Effect.gen(function* () {
      const dir = yield* scratch
      const s = yield* rawServer((_req, res) => {
        res.writeHead(200, { "content-length": 10 })
        res.write(Buffer.from("abcd"))
      })
      const part = NodePath.join(dir, "m.part")
      const downloader = yield* Downloader
      const fiber = yield* Effect.fork(
        Effect.flip(
          downloader.fetch({
            url: url(s.endpoint),
            part,
            size: 10,
            onProgress: () => Effect.void
          })
        )
      )
      yield* Deferred.await(s.seen)
      // Let the first bytes arrive (on the real clock), then let the stall last 30 s of Effect time.
      yield* Effect.promise(() => waitUntil(() => readFileSize(part) === 4))
      const error = yield* passTimeUntilDone(fiber)
      expect(error.message).toBe("the connection was interrupted after 4 of 10 bytes: no data for 30 s")
      expect(error.retryable).toBe(true)
      expect(readFileSync(part).toString()).toBe("abcd")
    }).pipe(Effect.provide(HttpDownloaderLive))
  )

  it.scoped("discards a body that runs past the expected size when no length was announced", () =>
    Effect.gen(function* () {
      const dir = yield* scratch
      const s = yield* rawServer((_req, res) => {
        res.writeHead(200)
        res.write(Buffer.from("abcd"))
        res.end(Buffer.from("efghijklmn"))
      })
      const part = NodePath.join(dir, "m.part")
      const downloader = yield* Downloader
      const error = yield* Effect.flip(
        downloader.fetch({ url: url(s.endpoint), part, size: 10, onProgress: () => Effect.void })
      )
      expect(error.message).toBe(
        "the server sent more than the expected 10 bytes: it is not the pinned file, and nothing of it was kept"
      )
      expect(error.retryable).toBe(false)
      expect(existsSync(part)).toBe(false)
    }).pipe(Effect.provide(HttpDownloaderLive))
  )

  it.scoped("stops after five redirects, and never shows credentials in its messages", () =>
    Effect.gen(function* () {
      const dir = yield* scratch
      const s = yield* rawServer((req, res) => {
        res.writeHead(302, { location: `${req.url ?? "/"}x` }).end()
      })
      const downloader = yield* Downloader
      const loop = yield* Effect.flip(
        downloader.fetch({
          url: url(s.endpoint),
          part: NodePath.join(dir, "a.part"),
          size: 10,
          onProgress: () => Effect.void
        })
      )
      expect(loop.message).toBe("too many redirects (more than 5)")
      expect(loop.retryable).toBe(false)
      yield* Effect.promise(() => new Promise<void>((done) => s.server.close(() => done())))
      const refused = yield* Effect.flip(
        downloader.fetch({
          url: url(s.endpoint.replace("http://", "http://user:s3cret@")),
          part: NodePath.join(dir, "b.part"),
          size: 10,
          onProgress: () => Effect.void
        })
      )
      expect(refused.message).toMatch(/^request failed: /)
      expect(refused.message).not.toContain("s3cret")
      expect(refused.retryable).toBe(true)
    }).pipe(Effect.provide(HttpDownloaderLive))
  )
})

/**
 * Moves the TestClock on by the 30 s bound until the fiber ends: the bound's timer may be set a
 * moment after the real event the test waited for, so one step may come too early.
 */
const passTimeUntilDone = <A, E>(fiber: Fiber.Fiber<A, E>) =>
  Effect.gen(function* () {
    for (let step = 0; step < 100; step++) {
      yield* TestClock.adjust("30 seconds")
      if (Option.isSome(yield* Fiber.poll(fiber))) break
      yield* Effect.promise(() => new Promise((r) => setTimeout(r, 10)))
    }
    return yield* Fiber.join(fiber)
  })

const readFileSize = (path: string) => {
  try {
    return readFileSync(path).length
  } catch {
    return -1
  }
}

const waitUntil = async (done: () => boolean) => {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 10))
}
