import { createHash } from "node:crypto"
import { createReadStream } from "node:fs"
import { Effect, Layer } from "effect"
import { FileDigest } from "../src/embedding/file-digest.js"
import { FsError } from "../src/fs/safe-fs.js"

const codeOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "code" in error ? String(error.code) : "EUNKNOWN"

/** SHA-256 with node:crypto over a read stream. */
export const NodeFileDigestLive = Layer.succeed(FileDigest, {
  sha256: (path) =>
    Effect.tryPromise({
      try: async () => {
        const hash = createHash("sha256")
        let size = 0
        for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
          hash.update(chunk)
          size += chunk.length
        }
        return { size, sha256: hash.digest("hex") }
      },
      catch: (error) =>
        new FsError({
          op: "read",
          path,
          code: codeOf(error),
          message: error instanceof Error ? error.message : String(error)
        })
    })
})
