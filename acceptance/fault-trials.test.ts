import { randomUUID } from "node:crypto"
import { createRequire } from "node:module"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import type { BlctxClient } from "../src/rpc/client.js"
import { type DaemonHome, isAlive, makeDaemonHome, waitFor } from "./support/daemon-harness.js"
import { proofRounds } from "./support/proof-tier.js"

// kill -9 of the daemon in the middle of acknowledged writes (log_update and update_note), again
// and again: every write it acknowledged is there after the restart, exactly once, nothing is
// half-written, and a client that retries what was not acknowledged (same update id) gets each
// write exactly once. The import's and forget's own kill trials are in index-search.test.ts and
// forget.test.ts. Under `npm run proof` 20, 5 and these 76 run (101 kill -9 trials in all); the
// quick tier runs 6, 5 and the first 14 of these: trial t kills after t % 13 acknowledged writes,
// alternating log_update and update_note, so 14 cover every kill point (0 to 12) once and each
// write kind at kill point 0. BLCTX_FAULT_TRIALS sets how many run here.

const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
const builtClient = NodePath.join(root, "dist", "src", "rpc", "client.js")
const TRIALS = proofRounds({ quick: 14, full: 76 }, process.env.BLCTX_FAULT_TRIALS)
const WRITES_PER_TRIAL = 12

interface SqliteDatabase {
  prepare(sql: string): { all(...params: ReadonlyArray<unknown>): Array<Record<string, unknown>> }
  close(): void
}
const Database = createRequire(import.meta.url)("better-sqlite3") as new (
  file: string,
  options?: { readonly readonly?: boolean }
) => SqliteDatabase

const query = (h: DaemonHome, sql: string, ...params: ReadonlyArray<unknown>) => {
  const db = new Database(h.database, { readonly: true })
  try {
    return db.prepare(sql).all(...params)
  } finally {
    db.close()
  }
}

const withClient = async <A>(h: DaemonHome, use: (client: BlctxClient) => Effect.Effect<A, unknown>) => {
  const { connect } = (await import(builtClient)) as typeof import("../src/rpc/client.js")
  return Effect.runPromise(
    Effect.scoped(Effect.flatMap(connect({ socketPath: h.socketPath, timeout: "30 seconds" }), use))
  )
}

/** The daemon's pid, killed with SIGKILL and waited for; then the CLI starts a new one. */
const killAndRestart = async (h: DaemonHome) => {
  const [pid] = h.daemonPids()
  expect(pid).toBeDefined()
  process.kill(pid as number, "SIGKILL")
  await waitFor("the killed daemon to be gone", () => (isAlive(pid as number) ? undefined : true))
  const ping = await h.blctx(["ping", "--json"])
  expect(ping.code, ping.stderr).toBe(0)
}

/** Starts `count` writes at once and kills the daemon as soon as `killAfter` of them are acknowledged. */
const writesUntilKilled = async <A>(
  h: DaemonHome,
  count: number,
  killAfter: number,
  write: (i: number) => Promise<A>
) => {
  const acknowledged = new Map<number, A>()
  let killed: Promise<void> | undefined
  const kill = () => {
    killed ??= killAndRestart(h)
    return killed
  }
  if (killAfter === 0) await kill()
  await Promise.all(
    Array.from({ length: count }, (_, i) =>
      write(i).then(
        (answer) => {
          acknowledged.set(i, answer)
          if (acknowledged.size >= killAfter) void kill()
        },
        () => undefined
      )
    )
  )
  await kill()
  return acknowledged
}

let home: DaemonHome | undefined
afterEach(() => {
  home?.dispose()
  home = undefined
})

describe("kill -9 during acknowledged writes", () => {
  it(`${TRIALS} trials of log_update and update_note: no acknowledged write lost, none twice, nothing half-written`, async () => {
    const h = makeDaemonHome("detached")
    home = h
    const install = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
    expect(install.code, install.stdout + install.stderr).toBe(0)
    const session = await withClient(h, (c) => c.OpenSession({ binding_key: randomUUID() }))
    const chain = await withClient(h, (c) =>
      c.LogUpdate({ session_id: session.session_id, update_id: randomUUID(), text: "chain revision 1" })
    )

    let killed = 0
    let acknowledgedTotal = 0
    let retried = 0
    let revisions = 1
    for (let trial = 0; trial < TRIALS; trial++) {
      const killAfter = trial % (WRITES_PER_TRIAL + 1)
      if (trial % 2 === 0) {
        // log_update: a burst of new notes, each with its own update id.
        const ids = Array.from({ length: WRITES_PER_TRIAL }, () => randomUUID())
        const text = (i: number) => `trial ${trial} note ${i}`
        const acknowledged = await writesUntilKilled(h, ids.length, killAfter, (i) =>
          withClient(h, (c) => c.LogUpdate({ session_id: session.session_id, update_id: ids[i] ?? "", text: text(i) }))
        )
        killed++
        acknowledgedTotal += acknowledged.size
        for (const [i, answer] of acknowledged) {
          const rows = query(h, "SELECT note_id FROM authored_updates WHERE update_id = ?", ids[i])
          expect(rows, `acknowledged update ${i} of trial ${trial}`).toEqual([{ note_id: answer.note_id }])
        }
        // The client retries what it did not hear back about: each lands exactly once.
        for (const [i, id] of ids.entries()) {
          if (acknowledged.has(i)) continue
          retried++
          await withClient(h, (c) => c.LogUpdate({ session_id: session.session_id, update_id: id, text: text(i) }))
        }
        const stored = query(
          h,
          `SELECT count(*) AS n FROM authored_updates WHERE update_id IN (${ids.map(() => "?").join(",")})`,
          ...ids
        )
        expect(stored[0]?.n).toBe(ids.length)
      } else {
        // update_note: revisions of one note, one after another; the kill lands after `killAfter`
        // acknowledged revisions, with the next one in flight.
        const start = revisions
        const acknowledged = await writesUntilKilled(h, 1, 1, async () => {
          let done = 0
          for (; done < killAfter; done++) {
            await withClient(h, (c) =>
              c.UpdateNote({
                note_id: chain.note_id,
                expected_revision: start + done,
                text: `chain revision ${start + done + 1}`
              })
            )
          }
          // In flight when the daemon dies (or just after): it may or may not have committed.
          void withClient(h, (c) =>
            c.UpdateNote({
              note_id: chain.note_id,
              expected_revision: start + done,
              text: `chain revision ${start + done + 1}`
            })
          ).catch(() => undefined)
          return done
        })
        killed++
        const done = acknowledged.get(0) ?? 0
        acknowledgedTotal += done
        const history = await withClient(h, (c) => c.NoteHistory({ note_id: chain.note_id }))
        const numbers = history.revisions.map((r) => r.revision)
        // Every acknowledged revision is there, the chain has no gap and no repeat.
        expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, i) => i + 1))
        expect(numbers.length).toBeGreaterThanOrEqual(start + done)
        expect(numbers.length).toBeLessThanOrEqual(start + done + 1)
        revisions = numbers.length
      }
      // Nothing half-written: every note revision has its message, every note message its revision.
      const orphans = query(
        h,
        `SELECT
           (SELECT count(*) FROM authored_updates a WHERE NOT EXISTS
              (SELECT 1 FROM messages m WHERE m.note_id = a.note_id AND m.note_revision = a.revision)) AS updates,
           (SELECT count(*) FROM messages m WHERE m.note_id IS NOT NULL AND NOT EXISTS
              (SELECT 1 FROM authored_updates a WHERE a.note_id = m.note_id AND a.revision = m.note_revision)) AS messages`
      )
      expect(orphans).toEqual([{ updates: 0, messages: 0 }])
    }
    expect(query(h, "PRAGMA integrity_check")).toEqual([{ integrity_check: "ok" }])
    console.log(
      `fault trials: ${killed} kill -9 during writes (${Math.ceil(TRIALS / 2)} log_update bursts, ${Math.floor(TRIALS / 2)} update_note chains); ${acknowledgedTotal} acknowledged writes, 0 lost, 0 twice; ${retried} unacknowledged retried, each stored once; integrity_check ok`
    )
  }, 1_800_000)
})
