import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { writeSyntheticHistory } from "../bench/synthetic-history.js"
import type { BlctxClient } from "../src/rpc/client.js"
import {
  type DaemonHome,
  type DaemonHomeOptions,
  isAlive,
  makeDaemonHome,
  waitFor,
  writerHeld
} from "./support/daemon-harness.js"
import { mcpArgs, startMcp, structured, toolErrorOf } from "./support/mcp-client.js"
import { modelData, serveTinyModel, useTinyModel } from "./support/model-server.js"
import { proofRounds } from "./support/proof-tier.js"

const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
/** kill -9 trials mid-import: 6 in the quick tier (each kill point once), 20 under `npm run proof`. */
const KILL_TRIALS = proofRounds({ quick: 6, full: 20 })
const builtClient = NodePath.join(root, "dist", "src", "rpc", "client.js")
const history = NodePath.join(root, "fixtures", "history")

interface SqliteDatabase {
  prepare(sql: string): { all(...params: ReadonlyArray<unknown>): Array<Record<string, unknown>> }
  exec(sql: string): void
  close(): void
}
const require = createRequire(import.meta.url)
const Database = require("better-sqlite3") as new (
  file: string,
  options?: { readonly readonly?: boolean; readonly timeout?: number }
) => SqliteDatabase

const query = (home: DaemonHome, sql: string) => {
  const db = new Database(home.database, { readonly: true })
  try {
    return db.prepare(sql).all()
  } finally {
    db.close()
  }
}

/** Rows, chunks, vectors (in every vector table) and duplicate messages, as the index holds them now. */
const counts = (home: DaemonHome) => {
  const db = new Database(home.database, { readonly: true })
  try {
    const one = (sql: string) => Number(db.prepare(sql).all()[0]?.n ?? 0)
    const tables = db.prepare("SELECT table_name FROM vector_collections").all()
    return {
      messages: one("SELECT count(*) AS n FROM messages"),
      chunks: one("SELECT count(*) AS n FROM chunks"),
      embedded: one("SELECT count(*) AS n FROM chunks WHERE vector_fingerprint IS NOT NULL"),
      vectors: tables.reduce((n, t) => n + one(`SELECT count(*) AS n FROM ${String(t.table_name)}`), 0),
      duplicates: one(
        "SELECT count(*) AS n FROM (SELECT source_file_id, byte_start FROM messages GROUP BY 1, 2 HAVING count(*) > 1)"
      )
    }
  } finally {
    db.close()
  }
}

const withClient = async <A>(home: DaemonHome, use: (client: BlctxClient) => Effect.Effect<A, unknown>) => {
  const { connect } = (await import(builtClient)) as typeof import("../src/rpc/client.js")
  return Effect.runPromise(
    Effect.scoped(Effect.flatMap(connect({ socketPath: home.socketPath, timeout: "10 seconds" }), use))
  )
}

let home: DaemonHome | undefined
afterEach(() => {
  home?.dispose()
  home = undefined
})

/** A Codex home with the fixture sessions filed the way Codex files them. */
const placeSession = (h: DaemonHome, name: string, archived = false) => {
  const dir = archived
    ? NodePath.join(h.codexHome, "archived_sessions")
    : NodePath.join(h.codexHome, "sessions", "2026", "02", "02")
  Fs.mkdirSync(dir, { recursive: true })
  const target = NodePath.join(dir, `rollout-2026-02-02T09-00-00-${name}`)
  Fs.copyFileSync(NodePath.join(history, name), target)
  return target
}

const json = async <A>(h: DaemonHome, args: ReadonlyArray<string>) => {
  const result = await h.blctx(args)
  expect(result.code, `${args.join(" ")}: ${result.stderr}${result.stdout}`).toBe(0)
  return JSON.parse(result.stdout) as A
}

interface Job {
  job: { id: string; state: string; counts: Record<string, number> }
}

const installService = async (h: DaemonHome) => {
  const install = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
  expect(install.code, install.stdout + install.stderr).toBe(0)
}

/** A daemon home with the tiny model installed from a loopback server, and the service running. */
const tinyModelHome = async (options: DaemonHomeOptions = {}) => {
  const data = modelData() as string
  const server = await serveTinyModel(data)
  const h = makeDaemonHome("detached", options)
  home = h
  useTinyModel(h, data, server)
  const install = await h.blctx(["install", "codex", "--step", "embedding_model", "--json"])
  expect(install.code, install.stdout).toBe(0)
  await installService(h)
  return { h, server }
}

describe("indexing and retrieval through the daemon", () => {
  it("indexes, skips unchanged files, appends incrementally, and answers search, recent, sessions, context and index-status", async () => {
    const h = makeDaemonHome("detached")
    home = h
    await installService(h)
    const file = placeSession(h, "session-1.jsonl")

    const first = await json<Job>(h, ["index", file, "--wait"])
    expect(first.job.state).toBe("completed")
    expect(first.job.counts.files_imported).toBe(1)
    expect(first.job.counts.messages_added).toBe(24)
    const again = await json<Job>(h, ["index", file, "--wait"])
    expect(again.job.counts.files_unchanged).toBe(1)
    expect(again.job.counts.bytes_parsed ?? 0).toBe(0)

    const size = Fs.statSync(file).size
    const more = [
      {
        timestamp: "2026-02-02T12:00:00Z",
        type: "event_msg",
        payload: { type: "task_started", turn_id: "appended-turn" }
      },
      {
        timestamp: "2026-02-02T12:00:01Z",
        type: "event_msg",
        payload: { type: "user_message", message: "Move the cron to 03:00?" }
      },
      {
        timestamp: "2026-02-02T12:00:02Z",
        type: "event_msg",
        payload: { type: "agent_message", message: "The nightly job now runs at 03:00 UTC.", phase: "final_answer" }
      }
    ]
    Fs.appendFileSync(file, `${more.map((l) => JSON.stringify(l)).join("\n")}\n`)
    const appended = await json<Job>(h, ["index", file, "--wait"])
    expect(appended.job.counts.files_appended).toBe(1)
    expect(appended.job.counts.messages_added).toBe(2)
    expect(appended.job.counts.bytes_parsed).toBeLessThan(Fs.statSync(file).size / 2)
    expect(appended.job.counts.bytes_parsed).toBeGreaterThan(Fs.statSync(file).size - size)
    expect(query(h, "SELECT count(*) AS n FROM messages")[0]?.n).toBe(26)

    interface Search {
      query_mode: string
      query_mode_reason: string | null
      results: Array<{
        context_id: string
        text: string
        source_type: string
        session_id: string
        project: string
        timestamp: string
        source: { path: string; line: number; byte_start: number; byte_end: number }
        chunk: { char_start: number; char_end: number }
        score: { kind: string }
      }>
      truncated: boolean
    }
    const found = await json<Search>(h, ["search", "blue-green", "rollout"])
    expect(found.query_mode).toBe("lexical")
    expect(found.query_mode_reason).toContain("model")
    const top = found.results[0]
    expect(top?.text).toContain("blue-green rollout")
    expect(top?.source.path).toBe(file)
    expect(top?.source.line).toBe(7)
    expect(top?.project).toBe("/home/dev/shop-api")
    expect(top?.source_type).toBe("codex_transcript")
    expect(top?.score.kind).toBe("bm25")
    const cited = Fs.readFileSync(file).subarray(top?.source.byte_start, top?.source.byte_end).toString("utf8")
    expect(JSON.parse(cited).payload.message).toBe(top?.text)

    interface Recent {
      turns: Array<{ last_activity: string; messages: Array<{ text: string }> }>
    }
    const recent = await json<Recent>(h, ["recent", "--since", "2026-02-02T12:00", "--until", "2026-02-03"])
    expect(recent.turns.map((t) => t.messages.map((m) => m.text))).toEqual([
      ["Move the cron to 03:00?", "The nightly job now runs at 03:00 UTC."]
    ])
    const none = await json<Recent>(h, ["recent", "--since", "2026-02-03", "--until", "2026-02-04"])
    expect(none.turns).toEqual([])

    // The sessions read, added the recipe's way: the CLI's JSON and the MCP tool answer alike.
    interface Sessions {
      sessions: Array<{ session_id: string; agent: string | null; project: string | null; turns: number }>
      next_offset: number | null
    }
    const [facts] = query(
      h,
      `SELECT max(session_id) AS session_id, count(DISTINCT turn_number) AS turns,
              strftime('%Y-%m-%dT%H:%M:%fZ', max(timestamp)) AS last FROM messages`
    )
    const listed = await json<Sessions & { sessions: Array<{ last_activity: string }> }>(h, ["sessions"])
    expect(listed.sessions).toEqual([
      expect.objectContaining({
        session_id: facts?.session_id,
        agent: "codex",
        project: "/home/dev/shop-api",
        turns: facts?.turns,
        messages: 26,
        last_activity: facts?.last
      })
    ])
    expect(listed.next_offset).toBeNull()
    expect((await json<Sessions>(h, ["sessions", "--since", "2026-02-03"])).sessions).toEqual([])
    const readable = await h.blctx(["sessions", "--pretty"])
    expect(readable.stdout).toContain(`codex  ${facts?.turns} turns  /home/dev/shop-api  ${facts?.session_id}`)
    const mcp = await startMcp({
      args: mcpArgs(h),
      env: { HOME: h.home, PATH: process.env.PATH ?? "", BLCTX_SERVICE_MANAGER: "detached" },
      cwd: h.home
    })
    try {
      expect(structured<Sessions>(await mcp.call("sessions", { agent: "codex" })).sessions).toEqual(listed.sessions)
      expect(structured<Sessions>(await mcp.call("sessions", { agent: "claude" })).sessions).toEqual([])
      expect(toolErrorOf(await mcp.call("sessions", { limit: 0 })).kind).toBe("invalid_arguments")
    } finally {
      await mcp.close()
    }

    interface Context {
      messages: Array<{ is_anchor: boolean; text: string; char_offset: number; text_length: number }>
    }
    const context = await json<Context>(h, ["context", top?.context_id ?? "", "--limit", "1", "--char-offset", "10"])
    expect(context.messages).toHaveLength(1)
    expect(context.messages[0]?.char_offset).toBe(10)

    interface Status {
      index_state: string
      query_mode: string
      coverage: { files: { total: number }; messages: number; vectors_pending: number; capture: string }
    }
    const status = await json<Status>(h, ["index-status"])
    expect(status.index_state).toBe("model_missing")
    expect(status.coverage.messages).toBe(26)
    expect(status.coverage.vectors_pending).toBe(26)
    expect(status.coverage.capture).toContain("never captures")
  })

  it("install --step history_index imports the five newest sessions as one job; reruns are cheap", async () => {
    const h = makeDaemonHome("detached")
    home = h
    const placed = ["session-1.jsonl", "session-2.jsonl", "session-3.jsonl", "session-4.jsonl"].map((f) =>
      placeSession(h, f)
    )
    placed.push(...writeSyntheticHistory(h.codexHome, 2, 5, 5, 700))
    // Distinct modification times: the oldest file is the one left out.
    for (const [i, file] of placed.entries()) Fs.utimesSync(file, 1_700_000_000 + i * 60, 1_700_000_000 + i * 60)
    const install = await h.blctx(["install", "codex", "--step", "history_index", "--json"])
    expect(install.code, install.stdout + install.stderr).toBe(0)
    const report = JSON.parse(install.stdout) as { checks: Array<{ id: string; status: string; detail: string }> }
    expect(report.checks.map((c) => c.id)).toEqual([
      "data_directory",
      "background_service",
      "session_discovery",
      "history_index"
    ])
    const step = report.checks.find((c) => c.id === "history_index")
    expect(step?.status).toBe("passed")
    expect(step?.detail).toContain("completed")
    const indexed = query(h, "SELECT path FROM source_files ORDER BY path").map((r) => String(r.path))
    expect(indexed).toHaveLength(5)
    expect(indexed).not.toContain(placed[0])

    const status = await h.blctx(["status", "--step", "history_index", "--json"])
    expect(status.code, status.stdout).toBe(0)
    const again = await h.blctx(["install", "codex", "--step", "history_index", "--json"])
    expect(again.code).toBe(0)
    const jobs = query(h, "SELECT counts FROM jobs WHERE kind = 'import' ORDER BY seq DESC LIMIT 1")
    expect(JSON.parse(String(jobs[0]?.counts)).files_unchanged).toBe(5)
  })

  it("caps a search response at exactly 24,000 characters and says so", async () => {
    const h = makeDaemonHome("detached")
    home = h
    await installService(h)
    const big = NodePath.join(h.home, "big.jsonl")
    Fs.writeFileSync(
      big,
      `${[
        {
          timestamp: "2026-02-01T00:00:00Z",
          type: "session_meta",
          payload: { id: "0199b100-0000-7000-8000-000000000001", cwd: "/w" }
        },
        {
          timestamp: "2026-02-01T00:00:01Z",
          type: "event_msg",
          payload: { type: "user_message", message: `overflow ${"z".repeat(20_000)}` }
        },
        {
          timestamp: "2026-02-01T00:00:02Z",
          type: "event_msg",
          payload: { type: "agent_message", message: `overflow ${"w".repeat(20_000)}`, phase: "final_answer" }
        }
      ]
        .map((l) => JSON.stringify(l))
        .join("\n")}\n`
    )
    await json<Job>(h, ["index", big, "--wait"])
    const found = await json<{
      truncated: boolean
      returned_chars: number
      results: Array<{ text: string; text_truncated: boolean }>
    }>(h, ["search", "overflow"])
    expect(found.truncated).toBe(true)
    expect(found.returned_chars).toBe(24_000)
    expect(found.results.reduce((n, r) => n + r.text.length, 0)).toBe(24_000)
    expect(found.results.some((r) => r.text_truncated)).toBe(true)
  })

  it("index --root covers active and archived sessions; a session moved to the archive is not duplicated", async () => {
    const h = makeDaemonHome("detached")
    home = h
    await installService(h)
    const one = placeSession(h, "session-1.jsonl")
    placeSession(h, "session-2.jsonl", true)
    const all = await json<Job>(h, ["index", "--root", h.codexHome, "--wait"])
    expect(all.job.counts.files_imported).toBe(2)
    const archived = NodePath.join(h.codexHome, "archived_sessions", NodePath.basename(one))
    Fs.renameSync(one, archived)
    const moved = await json<Job>(h, ["index", "--root", h.codexHome, "--wait"])
    expect(moved.job.counts.files_moved).toBe(1)
    expect(query(h, "SELECT count(*) AS n FROM messages")[0]?.n).toBe(48)
    expect(query(h, "SELECT count(*) AS n FROM source_files")[0]?.n).toBe(2)
  })

  it.skipIf(modelData() === undefined)(
    "with the tiny model (BLCTX_TEST_MODEL_DATA): search is hybrid, and while a repair holds the writer it is answered lexically",
    async () => {
      const { h, server } = await tinyModelHome({ heldDaemon: true })
      try {
        const files = writeSyntheticHistory(NodePath.join(h.home, "history"), 2, 20, 3, 900)
        await json<Job>(h, ["index", ...files, "--wait"])
        interface Search {
          query_mode: string
          query_mode_reason: string | null
          results: Array<{ score: { kind: string } }>
        }
        const hybrid = await json<Search>(h, ["search", "deploy", "rollout"])
        expect(hybrid.query_mode).toBe("hybrid")
        expect(hybrid.results[0]?.score.kind).toBe("fused")

        // A rebuild of every vector, pausing inside each batch's write transaction for longer
        // than any search below can take, so the repair holds the writer throughout.
        h.holdJobs({ repair_batch_ms: 60_000 })
        const repair = await withClient(h, (c) => c.SubmitJob({ kind: "repair", params: { force: true } }))
        await waitFor("the repair to run", () =>
          withClient(h, (c) => c.JobStatus({ job_id: repair.job.id })).then((j) =>
            j.state === "running" ? j : undefined
          )
        )
        await waitFor("the repair to hold the writer", () => (writerHeld(h.database) ? true : undefined))
        const during = await json<Search>(h, ["search", "deploy", "rollout"])
        expect(during.query_mode).toBe("lexical")
        expect(during.query_mode_reason).toContain("repair")
        expect(during.results.length).toBeGreaterThan(0)
        expect(during.results[0]?.score.kind).toBe("bm25")
        await withClient(h, (c) => c.CancelJobs({ job_ids: [repair.job.id] }))
      } finally {
        await server.close()
      }
    },
    300_000
  )

  it.skipIf(modelData() === undefined)(
    `with the tiny model (BLCTX_TEST_MODEL_DATA): ${KILL_TRIALS} kill -9 trials mid-import end with the counts of a clean import`,
    async () => {
      const { h, server } = await tinyModelHome()
      try {
        const FILES = 6
        const TURNS = 40
        let interrupted = 0
        for (let trial = 0; trial < KILL_TRIALS; trial++) {
          // Each trial imports sessions of its own: a clean import of them stores 3 messages a turn.
          const files = writeSyntheticHistory(
            NodePath.join(h.home, `trial-${trial}`),
            FILES,
            TURNS,
            trial + 1,
            trial * FILES + 1
          )
          const submitted = await withClient(h, (c) =>
            c.SubmitJob({ kind: "import", params: { paths: files, origin: "cli" } })
          )
          // Killed on an event, not after a delay: once the job runs and has committed a number of
          // its files (0 to all but one, in turn), so the kill lands inside it however fast it is.
          const before = trial % FILES
          await waitFor("the import to reach its kill point", () =>
            withClient(h, (c) => c.JobStatus({ job_id: submitted.job.id })).then(
              (j) => (j.state !== "queued" && (j.state !== "running" || j.progress_done >= before) ? j : undefined),
              () => undefined
            )
          )
          const [pid] = h.daemonPids()
          if (pid !== undefined) {
            process.kill(pid, "SIGKILL")
            await waitFor("the killed daemon to be gone", () => (isAlive(pid) ? undefined : true))
          }
          // The CLI restarts the detached daemon on demand; the job resumes at its first unfinished file.
          const ping = await h.blctx(["ping", "--json"])
          expect(ping.code, ping.stderr).toBe(0)
          const done = await waitFor(
            "the import to finish",
            () =>
              withClient(h, (c) => c.JobStatus({ job_id: submitted.job.id })).then(
                (j) => (j.state === "queued" || j.state === "running" ? undefined : j),
                () => undefined
              ),
            120_000
          )
          expect(done.state).toBe("completed")
          if (done.attempts > 1) interrupted++
          const c = counts(h)
          expect(c.duplicates).toBe(0)
          expect(c.messages).toBe((trial + 1) * FILES * TURNS * 3)
          expect(c.chunks).toBe(c.messages)
          expect(c.embedded).toBe(c.chunks)
          expect(c.vectors).toBe(c.chunks)
        }
        // Most kills must land inside the job, or the trials prove nothing.
        expect(interrupted).toBeGreaterThanOrEqual(KILL_TRIALS / 2)
      } finally {
        await server.close()
      }
    },
    900_000
  )
})
