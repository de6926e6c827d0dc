import { createHash } from "node:crypto"
import * as Fs from "node:fs/promises"
import { Effect, Layer } from "effect"
import { FileDigest } from "../src/embedding/file-digest.js"
import { FsError } from "../src/fs/safe-fs.js"

const codeOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "code" in error ? String(error.code) : "EUNKNOWN"

/** SHA-256 with node:crypto over a read stream of a descriptor opened without following links. */
export const NodeFileDigestLive = Layer.succeed(FileDigest, {
  sha256: (path) =>
    Effect.tryPromise({
      try: async () => {
        const hash = createHash("sha256")
        let size = 0
        // Never through a link: a model file swapped for one after its lstat fails with ELOOP.
        const handle = await Fs.open(path, Fs.constants.O_RDONLY | Fs.constants.O_NOFOLLOW)
        try {
          for await (const chunk of handle.createReadStream({ autoClose: false }) as AsyncIterable<Buffer>) {
            hash.update(chunk)
            size += chunk.length
          }
        } finally {
          await handle.close()
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
