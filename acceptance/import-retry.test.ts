import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { writeRolloutFile } from "../bench/synthetic-history.js"
import type { BlctxClient } from "../src/rpc/client.js"
import { type DaemonHome, isAlive, makeDaemonHome, waitFor } from "./support/daemon-harness.js"

const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
const builtClient = NodePath.join(root, "dist", "src", "rpc", "client.js")

interface SqliteDatabase {
  prepare(sql: string): {
    all(...params: ReadonlyArray<unknown>): Array<Record<string, unknown>>
    run(...params: ReadonlyArray<unknown>): unknown
  }
  close(): void
}
const Database = createRequire(import.meta.url)("better-sqlite3") as new (
  file: string,
  options?: { readonly readonly?: boolean; readonly timeout?: number }
) => SqliteDatabase

const withClient = async <A>(home: DaemonHome, use: (client: BlctxClient) => Effect.Effect<A, unknown>) => {
  const { connect } = (await import(builtClient)) as typeof import("../src/rpc/client.js")
  return Effect.runPromise(
    Effect.scoped(Effect.flatMap(connect({ socketPath: home.socketPath, timeout: "10 seconds" }), use))
  )
}

const withDatabase = <A>(home: DaemonHome, use: (db: SqliteDatabase) => A, readonly = true) => {
  const db = new Database(home.database, { readonly, timeout: 5_000 })
  try {
    return use(db)
  } finally {
    db.close()
  }
}

/** A Codex session of one turn whose request and answer carry `words`. */
const writeSession = (h: DaemonHome, session: number, words: string) =>
  writeRolloutFile(
    NodePath.join(h.home, "history"),
    session,
    session,
    1,
    () => ({
      request: `What about ${words}?`,
      reasoning: "thinking it over",
      commentary: "looking",
      toolOutput: "nothing to see",
      answer: `Settled: ${words} it is.`
    }),
    { value: Date.UTC(2026, 0, session) }
  )

/** Whether a search for `words` finds a message of `path`. */
const found = async (h: DaemonHome, words: string, path: string) => {
  const search = await h.blctx(["search", words])
  if (search.code !== 0) return false
  const results = (JSON.parse(search.stdout) as { results: ReadonlyArray<{ text: string; source: { path?: string } }> })
    .results
  return results.some((r) => r.text.includes(words) && r.source.path === path)
}

interface Waiting {
  readonly path: string
  readonly attempts: number
  readonly next_retry_at: string
  readonly reason: string
}

const waiting = async (h: DaemonHome) => {
  const status = await h.blctx(["index-status"])
  expect(status.code, status.stderr).toBe(0)
  const coverage = (
    JSON.parse(status.stdout) as {
      coverage: { import_retries_waiting: number; import_retries: ReadonlyArray<Waiting> }
    }
  ).coverage
  return coverage
}

let home: DaemonHome | undefined
afterEach(() => {
  home?.dispose()
  home = undefined
})

describe("skipped imports are retried by the daemon", () => {
  it("a file skipped after two kill -9 inside it is imported again by blctxd itself: when its time comes, and at once when it changed", async () => {
    const h = makeDaemonHome("detached", { heldDaemon: true })
    home = h
    const install = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
    expect(install.code, install.stdout + install.stderr).toBe(0)

    // A is retried when its time comes, C because it changed; B imports at the first try.
    const a = writeSession(h, 1, "marmalade zeppelin")
    const c = writeSession(h, 2, "tangerine xylophone")
    const b = writeSession(h, 3, "saffron trombone")
    const marker = NodePath.join(h.stateDir, "test-held-import_file_ms")
    const heldOn = (path: string) =>
      waitFor(`the import to be held inside ${NodePath.basename(path)}`, () => {
        try {
          return Fs.readFileSync(marker, "utf8") === path ? true : undefined
        } catch {
          return undefined
        }
      })
    const killDaemon = async () => {
      const pids = h.daemonPids()
      expect(pids.length).toBe(1)
      const pid = pids[0] as number
      process.kill(pid, "SIGKILL")
      await waitFor("the killed daemon to be gone", () => (isAlive(pid) ? undefined : true))
      Fs.rmSync(marker, { force: true })
    }
    /** The CLI starts the detached daemon on demand: nothing is submitted, nothing indexed by hand. */
    const startDaemon = async () => {
      const ping = await h.blctx(["ping", "--json"])
      expect(ping.code, ping.stderr).toBe(0)
    }

    // Every import now waits before reading each file, so each kill lands inside a known file.
    h.holdJobs({ import_file_ms: 600_000 })
    const submitted = await withClient(h, (client) =>
      client.submitJob({ kind: "import", params: { paths: [a, c, b], origin: "cli" } })
    )
    const jobId = submitted.job.id
    for (const file of [a, c]) {
      // The first attempt inside the file, killed; the resumed one, killed again: the third skips it.
      await heldOn(file)
      await killDaemon()
      await startDaemon()
      await heldOn(file)
      await killDaemon()
      if (file === c) h.holdJobs({ import_file_ms: 0 })
      await startDaemon()
    }
    const done = await waitFor(
      "the import to end",
      () =>
        withClient(h, (client) => client.jobStatus(jobId)).then(
          (j) => (j.state === "queued" || j.state === "running" ? undefined : j),
          () => undefined
        ),
      60_000
    )
    expect(done.state).toBe("partial")
    expect(done.counts.files_unreadable).toBe(2)
    expect(done.counts.files_imported).toBe(1)
    expect(await found(h, "saffron trombone", b)).toBe(true)
    expect(await found(h, "marmalade zeppelin", a)).toBe(false)

    // Both skips wait, a minute after they were made (the first step of the backoff).
    const before = await waiting(h)
    expect(before.import_retries_waiting).toBe(2)
    expect(before.import_retries.map((r) => r.path).sort()).toEqual([a, c].sort())
    for (const r of before.import_retries) {
      expect(r.attempts).toBe(1)
      expect(r.reason).toContain("interrupted 2 times")
      expect(Date.parse(r.next_retry_at)).toBeLessThanOrEqual(Date.now() + 60_000)
    }
    const skips = withDatabase(h, (db) =>
      db.prepare("SELECT path, next_retry_at, skipped_at FROM import_retries").all()
    )
    for (const s of skips) expect(Date.parse(String(s.next_retry_at)) - Date.parse(String(s.skipped_at))).toBe(60_000)

    // Time passes for A: its next try is moved into the past (the backoff schedule itself is proven
    // on the test clock, src/daemon/import-retry-loop.test.ts). C's is moved a day ahead, and C is
    // appended to: only its change makes it due.
    const [pid] = h.daemonPids()
    expect(pid).toBeDefined()
    process.kill(pid as number, "SIGTERM")
    await waitFor("the stopped daemon to be gone", () => (isAlive(pid as number) ? undefined : true))
    withDatabase(
      h,
      (db) => {
        const update = db.prepare("UPDATE import_retries SET next_retry_at = ? WHERE path = ?")
        update.run(new Date(Date.now() - 1_000).toISOString(), a)
        update.run(new Date(Date.now() + 86_400_000).toISOString(), c)
      },
      false
    )
    const appended = [
      { timestamp: "2026-02-02T12:00:00Z", type: "event_msg", payload: { type: "task_started", turn_id: "later" } },
      {
        timestamp: "2026-02-02T12:00:01Z",
        type: "event_msg",
        payload: { type: "user_message", message: "And the periwinkle gondola?" }
      }
    ]
    Fs.appendFileSync(c, `${appended.map((l) => JSON.stringify(l)).join("\n")}\n`)

    // No `blctx index`, no submitted job: the daemon, once started, imports both by itself.
    await startDaemon()
    await waitFor(
      "A and C to be imported again and nothing to wait",
      async () =>
        (await found(h, "marmalade zeppelin", a)) &&
        (await found(h, "periwinkle gondola", c)) &&
        (await waiting(h)).import_retries_waiting === 0
          ? true
          : undefined,
      90_000
    )
    const retries = withDatabase(h, (db) =>
      db.prepare("SELECT params, state FROM jobs WHERE kind = 'import' AND id != ?").all(jobId)
    )
    expect(retries.length).toBeGreaterThanOrEqual(1)
    for (const r of retries) expect(JSON.parse(String(r.params)).origin).toBe("retry")
    expect(retries.map((r) => r.state)).toContain("completed")
  }, 300_000)
})
