import { Context, Data, type Effect } from "effect"

/** A download did not complete. `retryable` failures (a cut connection) resume from the `.part` file. */
export class DownloadError extends Data.TaggedError("DownloadError")<{
  readonly url: string
  readonly path: string
  readonly message: string
  readonly retryable: boolean
}> {}

export interface DownloadRequest {
  readonly url: string
  /** The `.part` file: bytes already in it are kept and only the rest is requested (HTTP Range). */
  readonly part: string
  /** The expected size; the download stops with an error if the server sends more. */
  readonly size: number
  /** Called as bytes arrive with the number of bytes now in the `.part` file. */
  readonly onProgress: (bytesOnDisk: number) => Effect.Effect<void>
}

export interface DownloadResult {
  /** Bytes that were already in the `.part` file and were not fetched again. */
  readonly resumedFrom: number
  readonly bytesOnDisk: number
}

/**
 * Resumable downloads of model files. Only the embedding_model installer step uses it:
 * indexing and querying never download anything.
 */
export class Downloader extends Context.Tag("blctx/Downloader")<
  Downloader,
  { readonly fetch: (request: DownloadRequest) => Effect.Effect<DownloadResult, DownloadError> }
>() {}
