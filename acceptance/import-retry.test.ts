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
      client.SubmitJob({ kind: "import", params: { paths: [a, c, b], origin: "cli" } })
    )
    const jobId = submitted.job.id
    /** The first attempt inside the file, killed; the resumed one, killed again: the next skips it. */
    const killTwiceInside = async (file: string) => {
      await heldOn(file)
      await killDaemon()
      await startDaemon()
      await heldOn(file)
      await killDaemon()
    }
    /**
     * Checked right after the skip, before its minute is up (else the daemon may already have
     * tried it again): `index-status` lists it, skipped once, next try a minute after the skip.
     */
    const waitsAMinute = async (file: string) => {
      const listed = (await waiting(h)).import_retries.find((r) => r.path === file)
      expect(listed, `${file} waiting`).toBeDefined()
      expect(listed?.attempts).toBe(1)
      expect(listed?.reason).toContain("interrupted 2 times")
      expect(Date.parse(listed?.next_retry_at ?? "")).toBeLessThanOrEqual(Date.now() + 60_000)
      const row = withDatabase(h, (db) =>
        db.prepare("SELECT next_retry_at, skipped_at FROM import_retries WHERE path = ?").all(file)
      )[0]
      expect(Date.parse(String(row?.next_retry_at)) - Date.parse(String(row?.skipped_at))).toBe(60_000)
    }

    await killTwiceInside(a)
    await startDaemon()
    // The resumed job skipped A and holds inside C now.
    await heldOn(c)
    await waitsAMinute(a)
    expect(await found(h, "marmalade zeppelin", a)).toBe(false)
    await killTwiceInside(c)
    h.holdJobs({ import_file_ms: 0 })
    await startDaemon()
    const done = await waitFor(
      "the import to end",
      () =>
        withClient(h, (client) => client.JobStatus({ job_id: jobId })).then(
          (j) => (j.state === "queued" || j.state === "running" ? undefined : j),
          () => undefined
        ),
      60_000
    )
    expect(done.state).toBe("partial")
    expect(done.counts.files_unreadable).toBe(2)
    expect(done.counts.files_imported).toBe(1)
    expect(await found(h, "saffron trombone", b)).toBe(true)
    await waitsAMinute(c)
    expect(await found(h, "tangerine xylophone", c)).toBe(false)

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
    const restarted = Date.now()
    await startDaemon()
    await waitFor(
      "A to be imported again once its time came",
      async () => (await found(h, "marmalade zeppelin", a)) || undefined,
      90_000
    )
    await waitFor(
      "C to be imported again since it changed",
      async () => (await found(h, "periwinkle gondola", c)) || undefined,
      30_000
    )
    expect(await found(h, "tangerine xylophone", c)).toBe(true)
    expect((await waiting(h)).import_retries_waiting).toBe(0)
    const retries = withDatabase(h, (db) =>
      db.prepare("SELECT params, state FROM jobs WHERE kind = 'import' AND id != ?").all(jobId)
    )
    expect(retries.length).toBeGreaterThanOrEqual(1)
    for (const r of retries) expect(JSON.parse(String(r.params)).origin).toBe("retry")
    expect(retries.map((r) => r.state)).toContain("completed")
    console.log(
      `import retry: 4 kill -9 inside 2 files, both skipped then imported again by the daemon ${Date.now() - restarted} ms after its start; ${retries.length} retry job(s)`
    )
  }, 300_000)
})
