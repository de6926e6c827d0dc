import { createRequire } from "node:module"
import { COLLECTIONS_TABLE, vectorTableName } from "../layers/sqlite-vector-index.js"
import type { ModelFingerprint } from "../src/embedding/fingerprint.js"

const require = createRequire(import.meta.url)

interface Db {
  prepare(sql: string): { run(...params: Array<unknown>): unknown }
  exec(sql: string): void
  transaction<T>(f: () => T): () => T
  close(): void
}
const Database = require("better-sqlite3") as new (file: string) => Db

/**
 * Hands the vectors one model wrote to another model of the same dimensions, as if that model
 * had written them: the collection, its tables and indexes, and every chunk's label. A bench
 * fills 100k chunks through the cheap stand-in encoder, then relabels them for the encoder of
 * bge-small-en's size, so the daemon runs with that model loaded over a full index (embedding
 * 100k chunks with it would take hours here). The daemon must be stopped.
 */
export const relabelVectors = (
  database: string,
  from: Pick<ModelFingerprint, "key">,
  to: Pick<ModelFingerprint, "key" | "label">
) => {
  const db = new Database(database)
  try {
    const [old, next] = [vectorTableName(from), vectorTableName(to)]
    db.transaction(() => {
      db.prepare(
        `UPDATE ${COLLECTIONS_TABLE} SET fingerprint = ?, table_name = ?, label = ? WHERE fingerprint = ?`
      ).run(to.key, next, to.label, from.key)
      db.exec(`DROP INDEX IF EXISTS ${old}_seq; DROP INDEX IF EXISTS ${old}_removed_seq;`)
      db.exec(`ALTER TABLE ${old} RENAME TO ${next}; ALTER TABLE ${old}_removed RENAME TO ${next}_removed;`)
      db.exec(`CREATE INDEX ${next}_seq ON ${next} (seq); CREATE INDEX ${next}_removed_seq ON ${next}_removed (seq);`)
      db.prepare("UPDATE chunks SET vector_fingerprint = ? WHERE vector_fingerprint = ?").run(to.key, from.key)
      db.prepare("UPDATE removed_chunks SET vector_fingerprint = ? WHERE vector_fingerprint = ?").run(to.key, from.key)
    })()
  } finally {
    db.close()
  }
}
