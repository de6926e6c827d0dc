import * as Fs from "node:fs/promises"
import { Effect, Layer } from "effect"
import { TranscriptFileError, TranscriptFiles, type TranscriptHandle } from "../src/transcripts/transcript-files.js"

const codeOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "code" in error ? String(error.code) : "EUNKNOWN"

const remediationFor = (code: string, path: string): string => {
  switch (code) {
    case "ENOENT":
      return `Check the path: ${path} does not exist (list transcripts with: blctx explore).`
    case "EACCES":
    case "EPERM":
      return `You cannot read ${path}; check its owner and permissions.`
    case "EISDIR":
    case "ENOTREG":
      return `${path} is not a regular file; pass a rollout-*.jsonl file.`
    default:
      return `Check that ${path} is a readable file.`
  }
}

const failure = (op: string, path: string, error: unknown) => {
  const code = codeOf(error)
  return new TranscriptFileError({
    op,
    path,
    code,
    message: error instanceof Error ? error.message : String(error),
    remediation: remediationFor(code, path)
  })
}

/** node:fs positioned reads; the handle closes with the scope. */
export const NodeTranscriptFilesLive = Layer.succeed(TranscriptFiles, {
  open: (path) =>
    Effect.gen(function* () {
      const handle = yield* Effect.acquireRelease(
        Effect.tryPromise({ try: () => Fs.open(path, "r"), catch: (e) => failure("open", path, e) }),
        (h) => Effect.promise(() => h.close().catch(() => undefined))
      )
      const stats = yield* Effect.tryPromise({ try: () => handle.stat(), catch: (e) => failure("stat", path, e) })
      if (!stats.isFile()) {
        return yield* Effect.fail(
          new TranscriptFileError({
            op: "open",
            path,
            code: stats.isDirectory() ? "EISDIR" : "ENOTREG",
            message: "not a regular file",
            remediation: remediationFor("ENOTREG", path)
          })
        )
      }
      const result: TranscriptHandle = {
        path,
        size: stats.size,
        mtimeMs: stats.mtimeMs,
        dev: stats.dev,
        ino: stats.ino,
        read: (position, length) =>
          Effect.tryPromise({
            try: async () => {
              const buffer = Buffer.allocUnsafe(length)
              const { bytesRead } = await handle.read(buffer, 0, length, position)
              return bytesRead === length ? buffer : buffer.subarray(0, bytesRead)
            },
            catch: (e) => failure("read", path, e)
          }),
        readInto: (position, buffer) =>
          Effect.tryPromise({
            try: async () => (await handle.read(buffer, 0, buffer.length, position)).bytesRead,
            catch: (e) => failure("read", path, e)
          })
      }
      return result
    })
})
