import * as Fs from "node:fs/promises"
import { HttpClient, type HttpClientError, HttpClientRequest } from "@effect/platform"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Duration, Effect, Layer, Stream } from "effect"
import { DownloadError, Downloader, type DownloadRequest } from "../src/embedding/downloader.js"
import { VERSION } from "../src/version.js"

const MAX_REDIRECTS = 5
/** How long the server may keep us waiting: for the response's head, and for each piece of its body. */
const IDLE_TIMEOUT = Duration.seconds(30)
const PROGRESS_EVERY_BYTES = 1 << 20
const NOT_PINNED = "it is not the pinned file, and nothing of it was kept"

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))

/**
 * What went wrong in the transport, without the request line: `HttpClientError.message` names the
 * URL, which may carry credentials (`user:pass@`); the step shows URLs only once redacted.
 */
const transportReason = (error: HttpClientError.HttpClientError) =>
  error.cause === undefined ? error.reason : describe(error.cause)

// lstat: a link at the `.part` path is no partial file (and the open below refuses it).
const sizeOf = (path: string) =>
  Effect.promise(() =>
    Fs.lstat(path).then(
      (s) => (s.isFile() ? s.size : 0),
      () => 0
    )
  )

/**
 * Opens the `.part` for appending or from empty, never through a link (O_NOFOLLOW), and only as a
 * plain file with one name: a link or hard link swapped in would have the download written into
 * another file.
 */
const openPart = async (part: string, append: boolean) => {
  const { O_WRONLY, O_CREAT, O_NOFOLLOW, O_APPEND } = Fs.constants
  // No O_TRUNC: a file with another name must be refused before a single byte of it changes.
  const handle = await Fs.open(part, O_WRONLY | O_CREAT | O_NOFOLLOW | O_APPEND, 0o600)
  const stats = await handle.stat()
  if (!stats.isFile() || stats.nlink !== 1) {
    await handle.close()
    throw new Error(
      `${part} is not a plain file with one name (it has ${stats.nlink} hard links); it was left untouched`
    )
  }
  if (!append) await handle.truncate(0)
  return handle
}

/**
 * Resumable downloads over @effect/platform's HttpClient. Resuming is a `Range` request answered
 * by 206 (append to the `.part`), 200 (the server ignored the range: start over) or 416 (the
 * `.part` is unusable); redirects are followed across hosts, as Hugging Face's CDN needs, keeping
 * the Range header. The body is an Effect Stream written to an append-mode handle, so progress
 * flows through the caller's Effect; every request is aborted when its fetch's scope closes.
 */
const makeFetch = (http: HttpClient.HttpClient) => {
  const client = http.pipe(
    HttpClient.followRedirects(MAX_REDIRECTS),
    // Nothing of blctx's tracing leaves the machine in request headers.
    HttpClient.withTracerPropagation(false),
    HttpClient.withScope
  )
  return Effect.fn("Downloader.fetch")(function* (request: DownloadRequest) {
    const { url, part, size } = request
    const failure = (message: string, retryable: boolean) => new DownloadError({ url, path: part, message, retryable })
    /**
     * A file of another size is not the pinned one, whatever its bytes: resuming it later could
     * only append more of the wrong file, so what is on disk goes and the failure is final.
     */
    const discard = (what: string) =>
      Effect.zipRight(
        Effect.promise(() => Fs.rm(part, { force: true })),
        Effect.fail(failure(`the server ${what} where ${size} are expected: ${NOT_PINNED}`, false))
      )
    let onDisk = yield* sizeOf(part)
    if (onDisk > size) {
      yield* Effect.promise(() => Fs.rm(part, { force: true }))
      onDisk = 0
    }
    if (onDisk === size) return { resumedFrom: onDisk, bytesOnDisk: onDisk }

    const response = yield* client
      .execute(
        HttpClientRequest.get(url).pipe(
          HttpClientRequest.setHeader("user-agent", `blctx/${VERSION}`),
          onDisk > 0 ? HttpClientRequest.setHeader("range", `bytes=${onDisk}-`) : (r) => r
        )
      )
      .pipe(
        Effect.mapError((error) => failure(`request failed: ${transportReason(error)}`, true)),
        Effect.timeoutFail({
          duration: IDLE_TIMEOUT,
          onTimeout: () => failure(`request failed: no answer for ${Duration.toSeconds(IDLE_TIMEOUT)} s`, true)
        })
      )
    const status = response.status
    let resumedFrom = onDisk
    if (status === 206) {
      const range = response.headers["content-range"]
      const start = /^bytes (\d+)-/.exec(range ?? "")?.[1]
      if (start === undefined || Number(start) !== onDisk) {
        yield* Effect.promise(() => Fs.rm(part, { force: true }))
        return yield* failure(`the server resumed at an unexpected offset (${range})`, true)
      }
      const total = /\/(\d+)$/.exec(range ?? "")?.[1]
      if (total !== undefined && Number(total) !== size) return yield* discard(`offers ${total} bytes`)
    } else if (status === 200) {
      resumedFrom = 0
      const length = response.headers["content-length"]
      if (length !== undefined && /^\d+$/.test(length) && Number(length) !== size) {
        return yield* discard(`offers ${length} bytes`)
      }
    } else if (status === 416) {
      yield* Effect.promise(() => Fs.rm(part, { force: true }))
      return yield* failure("the server refused to resume the partial file; it was removed", true)
    } else if (status >= 300 && status < 400) {
      return yield* failure(`too many redirects (more than ${MAX_REDIRECTS})`, false)
    } else {
      return yield* failure(`HTTP ${status}`, status >= 500 || status === 429)
    }

    const handle = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => openPart(part, resumedFrom > 0),
        catch: (error) => failure(`cannot write: ${describe(error)}`, false)
      }),
      (h) => Effect.promise(() => h.sync().finally(() => h.close()))
    )
    let written = resumedFrom
    let reported = written
    yield* request.onProgress(written)
    let oversize = false
    yield* response.stream.pipe(
      Stream.mapError((error) =>
        failure(`the connection was interrupted after ${written} of ${size} bytes: ${transportReason(error)}`, true)
      ),
      Stream.timeoutFail(
        () =>
          failure(
            `the connection was interrupted after ${written} of ${size} bytes: no data for ${Duration.toSeconds(IDLE_TIMEOUT)} s`,
            true
          ),
        IDLE_TIMEOUT
      ),
      Stream.runForEach((chunk) =>
        Effect.gen(function* () {
          if (written + chunk.length > size) {
            oversize = true
            return yield* failure(`the server sent more than the expected ${size} bytes: ${NOT_PINNED}`, false)
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
      ),
      Effect.tapError(() => (oversize ? Effect.promise(() => Fs.rm(part, { force: true })) : Effect.void))
    )
    if (written < size) {
      return yield* failure(`the connection closed after ${written} of ${size} bytes`, true)
    }
    return { resumedFrom, bytesOnDisk: written }
  }, Effect.scoped)
}

/** The downloader over whatever HttpClient the context provides (a fake one in tests). */
export const HttpDownloader = Layer.effect(
  Downloader,
  Effect.map(HttpClient.HttpClient, (http) => Downloader.of({ fetch: makeFetch(http) }))
)

/** The downloader over Node's http/https client. */
export const HttpDownloaderLive = HttpDownloader.pipe(Layer.provide(NodeHttpClient.layer))
