import * as Fs from "node:fs"
import { SqlClient } from "@effect/sql"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { NodeTranscriptFilesLive } from "../../layers/node-transcript-files.js"
import { exploreFile } from "../explore/explore-file.js"
import { renderFile } from "../explore/render-explore-text.js"
import { importOnce, makeTempDir, withHistoryDb } from "../importer/history-db.test-support.js"
import { SECRET_CORPUS } from "./secret-corpus.js"
import { CORPUS_PROJECT, survivorsIn, writeCorpusTranscripts } from "./secret-corpus.test-support.js"

let dir: string
beforeEach(() => {
  dir = makeTempDir("blctx-secret-corpus-")
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

/** Every row of every history table, as text. */
const dumpHistory = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const places: Array<{ where: string; content: string }> = []
  for (const table of ["source_files", "sessions", "messages", "chunks"]) {
    const rows = yield* sql.unsafe<Record<string, unknown>>(`SELECT * FROM ${table}`)
    places.push({ where: table, content: JSON.stringify(rows) })
  }
  const fts = yield* sql<{ text: string }>`SELECT text FROM chunks_fts`
  places.push({ where: "chunks_fts", content: JSON.stringify(fts) })
  return places
})

describe("the secret corpus through the importer and explore", () => {
  it.effect("nothing of any secret is stored, in message text or in session metadata", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        const { files, messages } = writeCorpusTranscripts(dir)
        let metadata = 0
        for (const file of files) {
          const report = yield* importOnce(file)
          expect(report.status).toBe("imported")
          metadata += report.counts.metadata_redactions ?? 0
        }
        expect(metadata).toBe(SECRET_CORPUS.filter((s) => s.where === "cwd").length)
        const sql = yield* SqlClient.SqlClient
        const stored = yield* sql<{ n: number }>`SELECT count(*) AS n FROM messages`
        expect(stored[0]?.n).toBe(messages)
        expect(survivorsIn(yield* dumpHistory)).toEqual([])

        // Ordinary metadata is untouched; a secret in a cwd is cut out and the rest of the path kept.
        const cwds = (yield* sql<{ cwd: string }>`SELECT cwd FROM sessions ORDER BY id`).map((r) => r.cwd)
        expect(cwds[0]).toBe(CORPUS_PROJECT)
        expect(cwds).toContain("/home/dev/clones/[REDACTED:github_token]/api")
        const projects = yield* sql<{ cwd: string }>`SELECT DISTINCT cwd FROM messages`
        expect(projects.map((r) => r.cwd).sort()).toEqual([...cwds].sort())
        const ids = yield* sql<{ id: string }>`SELECT id FROM sessions`
        for (const { id } of ids) expect(id).toMatch(/^0199e[0-9a-f]{3}-0000-7000-8000-0{12}$/)
      })
    )
  )

  it.effect("explore shows the stored text: redacted in --json and in the text views", () =>
    Effect.gen(function* () {
      const { files } = writeCorpusTranscripts(dir)
      const places: Array<{ where: string; content: string }> = []
      let messages = 0
      for (const path of files) {
        for (const view of ["conversation", "preview"] as const) {
          const result = yield* exploreFile({ path, view, details: true, startLine: 1, limit: 10_000 })
          messages += view === "conversation" ? (result.turns ?? []).flatMap((t) => t.messages).length : 0
          places.push(
            { where: `${path} ${view} json`, content: JSON.stringify(result) },
            { where: `${path} ${view} text`, content: renderFile(result, true) }
          )
        }
      }
      expect(messages).toBeGreaterThan(SECRET_CORPUS.length)
      expect(survivorsIn(places)).toEqual([])
    }).pipe(Effect.provide(NodeTranscriptFilesLive))
  )
})
