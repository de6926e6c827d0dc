import * as Fs from "node:fs/promises"
import * as Http from "node:http"
import * as Https from "node:https"
import { Effect, Layer, Stream } from "effect"
import { DownloadError, Downloader, type DownloadRequest } from "../src/embedding/downloader.js"
import { VERSION } from "../src/version.js"

const MAX_REDIRECTS = 5
const IDLE_TIMEOUT_MS = 30_000
const PROGRESS_EVERY_BYTES = 1 << 20

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** GET with redirects (Hugging Face answers `resolve` URLs with a redirect to its CDN). */
const get = (
  url: string,
  headers: Http.OutgoingHttpHeaders,
  redirects = MAX_REDIRECTS
): Promise<Http.IncomingMessage> =>
  new Promise((resolve, reject) => {
    const target = new URL(url)
    const client = target.protocol === "https:" ? Https : Http
    const request = client.get(target, { headers, timeout: IDLE_TIMEOUT_MS }, (response) => {
      const status = response.statusCode ?? 0
      const location = response.headers.location
      if (status >= 300 && status < 400 && location !== undefined) {
        response.resume()
        if (redirects === 0) return reject(new Error(`too many redirects from ${url}`))
        return resolve(get(new URL(location, target).href, headers, redirects - 1))
      }
      response.setTimeout(IDLE_TIMEOUT_MS, () => response.destroy(new Error(`no data for ${IDLE_TIMEOUT_MS / 1000} s`)))
      resolve(response)
    })
    request.on("timeout", () => request.destroy(new Error(`no answer for ${IDLE_TIMEOUT_MS / 1000} s`)))
    request.on("error", reject)
  })

const sizeOf = (path: string) =>
  Effect.promise(() =>
    Fs.stat(path).then(
      (s) => s.size,
      () => 0
    )
  )

/**
 * Resumable downloads with node's own HTTP client. Chosen over @effect/platform's HttpClient
 * because resuming needs the raw exchange: a `Range` request, then 206 (append), 200 (the server
 * ignored the range: start over) or 416 (the `.part` is unusable), and redirects across hosts,
 * streamed straight into an append-mode file handle. The body is consumed as an Effect Stream so
 * progress is reported through the caller's Effect.
 */
const fetchFile = Effect.fn("Downloader.fetch")(function* (request: DownloadRequest) {
  const { url, part, size } = request
  const failure = (message: string, retryable: boolean) => new DownloadError({ url, path: part, message, retryable })
  let onDisk = yield* sizeOf(part)
  if (onDisk > size) {
    yield* Effect.promise(() => Fs.rm(part, { force: true }))
    onDisk = 0
  }
  if (onDisk === size) return { resumedFrom: onDisk, bytesOnDisk: onDisk }

  const headers: Http.OutgoingHttpHeaders = {
    "user-agent": `blctx/${VERSION}`,
    ...(onDisk > 0 ? { range: `bytes=${onDisk}-` } : {})
  }
  const response = yield* Effect.tryPromise({
    try: () => get(url, headers),
    catch: (error) => failure(`request failed: ${describe(error)}`, true)
  })
  yield* Effect.addFinalizer(() => Effect.sync(() => response.destroy()))
  const status = response.statusCode ?? 0
  let resumedFrom = onDisk
  if (status === 206) {
    const start = /^bytes (\d+)-/.exec(response.headers["content-range"] ?? "")?.[1]
    if (start === undefined || Number(start) !== onDisk) {
      yield* Effect.promise(() => Fs.rm(part, { force: true }))
      return yield* failure(`the server resumed at an unexpected offset (${response.headers["content-range"]})`, true)
    }
  } else if (status === 200) {
    resumedFrom = 0
  } else if (status === 416) {
    yield* Effect.promise(() => Fs.rm(part, { force: true }))
    return yield* failure("the server refused to resume the partial file; it was removed", true)
  } else {
    return yield* failure(`HTTP ${status}`, status >= 500 || status === 429)
  }

  const handle = yield* Effect.acquireRelease(
    Effect.tryPromise({
      try: () => Fs.open(part, resumedFrom > 0 ? "a" : "w", 0o600),
      catch: (error) => failure(`cannot write: ${describe(error)}`, false)
    }),
    (h) => Effect.promise(() => h.sync().finally(() => h.close()))
  )
  let written = resumedFrom
  let reported = written
  yield* request.onProgress(written)
  yield* Stream.fromAsyncIterable(response as AsyncIterable<Buffer>, (error) =>
    failure(`the connection was interrupted after ${written} of ${size} bytes: ${describe(error)}`, true)
  ).pipe(
    Stream.runForEach((chunk) =>
      Effect.gen(function* () {
        if (written + chunk.length > size) {
          return yield* failure(`the server sent more than the expected ${size} bytes`, false)
        }
        yield* Effect.tryPromise({
          try: () => handle.write(chunk),
          catch: (error) => failure(`cannot write: ${describe(error)}`, false)
        })
        written += chunk.length
        if (written - reported >= PROGRESS_EVERY_BYTES || written === size) {
          reported = written
          yield* request.onProgress(written)
        }
      })
    )
  )
  if (written < size) {
    return yield* failure(`the connection closed after ${written} of ${size} bytes`, true)
  }
  return { resumedFrom, bytesOnDisk: written }
}, Effect.scoped)

export const HttpDownloaderLive = Layer.succeed(Downloader, { fetch: fetchFile })
