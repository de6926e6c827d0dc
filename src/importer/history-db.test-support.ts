import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { NodeSafeFsLive } from "../../layers/node-safe-fs.js"
import { NodeTranscriptFilesLive } from "../../layers/node-transcript-files.js"
import { SqliteOpenerLive } from "../../layers/sqlite-opener-live.js"
import { InstallationId } from "../domain/installation-id.js"
import type { SafeFs } from "../fs/safe-fs.js"
import { initializeDatabase } from "../store/identity.js"
import { SqliteOpener } from "../store/sqlite-opener.js"
import type { TranscriptFiles } from "../transcripts/transcript-files.js"
import { ImportServices, wholeMessageChunking } from "../vectors/import-services.js"
import { prepareFile } from "./import-file.js"

/** Test support: a real, migrated SQLite database in a temp dir, and imports into it. */

export const fixturesDir = NodePath.resolve(import.meta.dirname, "..", "..", "fixtures", "codex")

export const makeTempDir = (prefix: string) => Fs.realpathSync(Fs.mkdtempSync(NodePath.join(tmpdir(), prefix)))

/** No model installed: whole-message chunks, vectors pending (the real no-model mode). */
export const NoModelImport = Layer.succeed(ImportServices, {
  chunking: wholeMessageChunking,
  embedding: Option.none()
})

export const withHistoryDb = <A, E>(
  dir: string,
  use: Effect.Effect<A, E, SqlClient.SqlClient | ImportServices | SafeFs | TranscriptFiles>
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const opener = yield* SqliteOpener
      const sql = yield* opener.open({ filename: NodePath.join(dir, "context.db"), readonly: false })
      yield* initializeDatabase("context.db", InstallationId.make("6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b")).pipe(
        Effect.provideService(SqlClient.SqlClient, sql)
      )
      return yield* use.pipe(Effect.provideService(SqlClient.SqlClient, sql))
    })
  ).pipe(Effect.provide(Layer.mergeAll(SqliteOpenerLive, NodeSafeFsLive, NodeTranscriptFilesLive, NoModelImport)))

/** One import of one file, committed in a transaction as the job does. */
export const importOnce = (path: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const prepared = yield* Effect.scoped(prepareFile(path))
    yield* sql.withTransaction(prepared.write)
    return prepared.report
  })

/** Writes a transcript from line objects. */
export const writeTranscript = (path: string, lines: ReadonlyArray<unknown>) => {
  Fs.mkdirSync(NodePath.dirname(path), { recursive: true })
  Fs.writeFileSync(path, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`)
  return path
}
