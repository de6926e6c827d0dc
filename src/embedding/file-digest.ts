import { Context, type Effect, Schema } from "effect"
import type { FsError } from "../fs/safe-fs.js"

/** What identifies a file's content: its size and SHA-256 (a model file's pinned digest, or one just read). */
export const Digest = Schema.Struct({ size: Schema.Int, sha256: Schema.String })
export type Digest = typeof Digest.Type

/** Size and SHA-256 of a file, read as a stream (model files are large). */
export class FileDigest extends Context.Tag("blctx/FileDigest")<
  FileDigest,
  { readonly sha256: (path: string) => Effect.Effect<Digest, FsError> }
>() {}
