import { Context, type Effect } from "effect"
import type { FsError } from "../fs/safe-fs.js"

export interface Digest {
  readonly size: number
  readonly sha256: string
}

/** Size and SHA-256 of a file, read as a stream (model files are large). */
export class FileDigest extends Context.Tag("blctx/FileDigest")<
  FileDigest,
  { readonly sha256: (path: string) => Effect.Effect<Digest, FsError> }
>() {}
