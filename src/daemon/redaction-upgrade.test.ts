import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { SqlClient } from "@effect/sql"
import type { SqliteClient } from "@effect/sql-sqlite-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { migratedDatabase } from "../jobs/job-db.test-support.js"
import { makeRegistry, registerJobKind } from "../jobs/job-kind.js"
import { JobKinds } from "../jobs/job-kinds.js"
import { JobRunner } from "../jobs/job-runner.js"
import { JobStore } from "../jobs/job-store.js"
import { Paths } from "../paths/paths.js"
import { REDACTION_RULES_VERSION } from "../redaction/redact.js"
import { RULES_VERSION_KEY } from "../redaction/rules-version.js"
import { REDACT_KIND } from "../redaction-job/redact-kind.js"
import { RedactionUpgradeLive } from "./redaction-upgrade.js"
import { WriterDatabase } from "./writer-database.js"

/** Stands for the redact kind: what is under test is whether the daemon queues it. */
const redactKind = registerJobKind({
  name: REDACT_KIND,
  params: Schema.Struct({}),
  checkpoint: Schema.Struct({}),
  run: () => Effect.succeed({ state: "completed" as const })
})

/**
 * A migrated database set up by `prepare` (as an older release left it), then the daemon's start:
 * writer, runner, and the upgrade check. Returns the redact jobs recorded.
 */
const startWith = (prepare: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>) =>
  Effect.gen(function* () {
    const dir = mkdtempSync(NodePath.join(tmpdir(), "blctx-redaction-upgrade-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
    const database = NodePath.join(dir, "context.db")
    const prepared = Layer.effectDiscard(Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.orDie(prepare(sql))))
    const writer = Layer.effect(
      WriterDatabase,
      Effect.map(SqlClient.SqlClient, (sql) => ({
        sql: sql as SqliteClient.SqliteClient,
        path: database,
        schemaVersion: 0
      }))
    )
    const layer = RedactionUpgradeLive.pipe(
      Layer.provideMerge(JobRunner.Default),
      Layer.provideMerge(JobStore.Default),
      Layer.provideMerge(Layer.merge(writer, Layer.succeed(JobKinds, makeRegistry([redactKind])))),
      Layer.provideMerge(prepared),
      Layer.provideMerge(migratedDatabase(database)),
      Layer.provide(Paths.layerFrom({ home: dir }))
    )
    const context = yield* Layer.build(layer)
    const sql = yield* SqlClient.SqlClient.pipe(Effect.provide(context))
    return yield* sql<{ state: string }>`SELECT state FROM jobs WHERE kind = ${REDACT_KIND}`
  })

const setVersion = (version: number | null) => (sql: SqlClient.SqlClient) =>
  version === null
    ? sql`DELETE FROM meta WHERE key = ${RULES_VERSION_KEY}`
    : sql`INSERT INTO meta (key, value) VALUES (${RULES_VERSION_KEY}, ${String(version)})
          ON CONFLICT (key) DO UPDATE SET value = excluded.value`

describe("redacting again at daemon start", () => {
  it.scoped("queues one redact job when the stored text is of older rules (no version stored)", () =>
    Effect.gen(function* () {
      expect((yield* startWith(setVersion(null))).length).toBe(1)
    })
  )

  it.scoped("queues nothing for a database of the current rules (a new one is stamped at creation)", () =>
    Effect.gen(function* () {
      expect(yield* startWith(() => Effect.void)).toEqual([])
      expect(yield* startWith(setVersion(REDACTION_RULES_VERSION))).toEqual([])
    })
  )

  it.scoped("queues no second job while one is queued or running (an interrupted one is replayed)", () =>
    Effect.gen(function* () {
      const jobs = yield* startWith((sql) =>
        Effect.all([
          setVersion(1)(sql),
          sql`INSERT INTO jobs (id, kind, params, state, submitted_at, updated_at)
              VALUES ('00000000-0000-4000-8000-00000000000b', ${REDACT_KIND}, '{}', 'running', 'now', 'now')`
        ])
      )
      expect(jobs.length).toBe(1)
    })
  )
})
