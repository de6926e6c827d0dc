import { randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { SqlError } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
import { SqliteOpenerLive } from "../../layers/sqlite-opener-live.js"
import { SqliteOpener } from "../store/sqlite-opener.js"
import { inProcessClientWith } from "./daemon-core.test-support.js"
import { DaemonProcess } from "./daemon-process.js"
import { guardTransactions } from "./writer-database.js"

// A write the daemon cannot make durable at the database's path is refused, never confirmed:
// the database it holds was removed, or replaced by another file, while it ran. Through the
// handlers blctxd serves, on the same core layers, in process.

/** The in-process daemon, with a process that counts its stop requests. */
const daemon = Effect.gen(function* () {
  const stops = yield* Ref.make(0)
  const process = Layer.succeed(DaemonProcess, {
    pid: 4242,
    node: "/usr/bin/node",
    argv: ["blctxd"],
    requestStop: Ref.update(stops, (n) => n + 1)
  })
  const { client, paths } = yield* inProcessClientWith({ process })
  return { client, paths, stops }
})

const note = (session_id: string, text: string) => ({
  session_id,
  update_id: randomUUID(),
  text,
  tags: ["deploy"],
  kind: "decision" as const
})

describe("the writer connection, against the database at its path", () => {
  it.live("confirms writes while the database is at its path", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client, stops } = yield* daemon
        const session = yield* client.OpenSession({ binding_key: randomUUID(), project: "/home/dev/shop-api" })
        const logged = yield* client.LogUpdate(note(session.session_id, "Decided: deploy blue-green."))
        expect(logged.revision).toBe(1)
        yield* client.Ping()
        expect(yield* Ref.get(stops)).toBe(0)
      })
    )
  )

  it.live("refuses a write once the database was replaced by another file, and the daemon stops", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client, paths, stops } = yield* daemon
        const session = yield* client.OpenSession({ binding_key: randomUUID(), project: "/home/dev/shop-api" })
        // Another database takes the path (a restore, a copy moved into place).
        Fs.copyFileSync(paths.database, `${paths.database}.other`)
        Fs.renameSync(`${paths.database}.other`, paths.database)

        const refused = yield* Effect.flip(client.LogUpdate(note(session.session_id, "Decided: the zebra gate.")))
        expect(refused._tag).toBe("DaemonStoreError")
        expect(refused.message).toContain(`the database blctxd holds was replaced by another file at ${paths.database}`)
        expect(refused.message).toContain("blctxd is stopping")
        expect(yield* Ref.get(stops)).toBe(1)

        // Every later write and health answer says the same; nothing is confirmed.
        const job = yield* Effect.flip(client.SubmitJob({ kind: "gate" }))
        expect(job._tag).toBe("DaemonStoreError")
        const ping = yield* Effect.flip(client.Ping())
        expect(ping).toMatchObject({ _tag: "DaemonStopping", path: paths.database })
        const status = yield* Effect.flip(client.ContextStatus())
        expect(status.message).toContain("blctxd is stopping")
        expect(yield* Ref.get(stops)).toBe(1)
      })
    )
  )

  it.live("refuses a write once the database was removed; a health answer alone stops the daemon", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client, paths, stops } = yield* daemon
        const session = yield* client.OpenSession({ binding_key: randomUUID(), project: "/home/dev/shop-api" })
        Fs.rmSync(paths.dataDir, { recursive: true, force: true })

        const ping = yield* Effect.flip(client.Ping())
        expect(ping.message).toContain(`the database blctxd holds was removed from ${paths.database}`)
        expect(yield* Ref.get(stops)).toBe(1)
        const refused = yield* Effect.flip(client.LogUpdate(note(session.session_id, "Decided: the zebra gate.")))
        expect(refused.message).toContain(`was removed from ${paths.database}`)
      })
    )
  )
})

describe("guardTransactions", () => {
  /** A connection to a fresh database with one table, and a guard that fails from its `failFrom`th run. */
  const guarded = (failFrom: number) =>
    Effect.gen(function* () {
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-guard-"))),
        (d) => Effect.sync(() => Fs.rmSync(d, { recursive: true, force: true }))
      )
      const opened = yield* Effect.flatMap(SqliteOpener, (o) =>
        o.open({ filename: NodePath.join(dir, "t.db"), readonly: false })
      )
      yield* opened`CREATE TABLE t (v TEXT)`
      const runs = yield* Ref.make(0)
      const guard = Effect.flatMap(
        Ref.updateAndGet(runs, (n) => n + 1),
        (n) => (n >= failFrom ? Effect.fail(new SqlError.SqlError({ cause: null, message: "replaced" })) : Effect.void)
      )
      return { sql: guardTransactions(opened, guard), runs }
    })

  it.scoped("a guard failing before COMMIT rolls the transaction back", () =>
    Effect.gen(function* () {
      const { sql } = yield* guarded(1)
      const refused = yield* Effect.flip(sql.withTransaction(sql`INSERT INTO t (v) VALUES ('lost')`))
      expect(refused.message).toBe("replaced")
      expect(yield* sql`SELECT v FROM t`).toEqual([])
    }).pipe(Effect.provide(SqliteOpenerLive))
  )

  it.scoped("a guard failing after COMMIT fails the call: the write is not confirmed", () =>
    Effect.gen(function* () {
      const { sql, runs } = yield* guarded(2)
      const refused = yield* Effect.flip(sql.withTransaction(sql`INSERT INTO t (v) VALUES ('unconfirmed')`))
      expect(refused.message).toBe("replaced")
      expect(yield* Ref.get(runs)).toBe(2)
    }).pipe(Effect.provide(SqliteOpenerLive))
  )

  it.scoped("a passing guard runs inside and after every transaction, nested ones included", () =>
    Effect.gen(function* () {
      const { sql, runs } = yield* guarded(Number.POSITIVE_INFINITY)
      yield* sql.withTransaction(sql.withTransaction(sql`INSERT INTO t (v) VALUES ('kept')`))
      expect(yield* sql`SELECT v FROM t`).toEqual([{ v: "kept" }])
      expect(yield* Ref.get(runs)).toBe(4)
    }).pipe(Effect.provide(SqliteOpenerLive))
  )
})
