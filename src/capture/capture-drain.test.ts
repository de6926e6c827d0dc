import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { NodeSafeFsLive } from "../../layers/node-safe-fs.js"
import { SqliteOpenerLive } from "../../layers/sqlite-opener-live.js"
import { InstallationId } from "../domain/installation-id.js"
import type { SafeFs } from "../fs/safe-fs.js"
import { outsideFile, swappingSafeFs, symlinkSwap } from "../fs/swapping-safe-fs.test-support.js"
import { useTempDatabase } from "../history/migration.test-support.js"
import { readCaptureCounts } from "../retrieval/capture-counts.js"
import { initializeDatabase } from "../store/identity.js"
import { type DrainExpectations, drainSpool, inArrivalOrder, judgeCapture, spoolEntryKind } from "./capture-drain.js"
import { type BindingRow, makeCaptureStore, mergeBinding } from "./capture-drain-store.js"
import type { CaptureRecord } from "./capture-record.js"

const INSTALLATION = "6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b"
const GENERATION = "0a0b0c0d-1e1f-4a2b-8c3d-4e5f6a7b8c9d"
const OLD_GENERATION = "1b1b1b1b-2c2c-4d3d-8e4e-5f5f5f5f5f5f"
const BINDING = "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d"
const CLAUDE_GENERATION = "2c2c2c2c-3d3d-4e4e-8f5f-6a6a6a6a6a6a"
const expected: DrainExpectations = {
  installationId: INSTALLATION,
  generations: new Map([
    [GENERATION, "codex"],
    [CLAUDE_GENERATION, "claude"]
  ])
}

const record = (over: Partial<CaptureRecord> = {}): CaptureRecord => ({
  v: 1,
  installation_id: INSTALLATION,
  generation: GENERATION,
  agent: "codex",
  agent_home: "/home/a/.codex",
  event: "Stop",
  event_session_id: "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000",
  binding_key: BINDING,
  session_uuid: "3c3c3c3c-4d4d-4e5e-8f6f-7a7a7a7a7a7a",
  turn_id: "turn-1",
  cwd: "/home/a/project",
  transcript_path: "/home/a/.codex/sessions/2026/03/01/rollout-x.jsonl",
  received_at: "2026-03-01T10:00:00.000Z",
  ...over
})

const temp = useTempDatabase("blctx-capture-drain-")
const TestLayer = Layer.mergeAll(SqliteOpenerLive, NodeSafeFsLive)

/** A migrated database and a spool folder in the temp dir; `run` drains it once. */
const withSpool = <A, E>(
  use: (spool: {
    readonly dir: string
    readonly put: (name: string, content: string | CaptureRecord) => void
    readonly drain: ReturnType<typeof drainSpool<never>>
  }) => Effect.Effect<A, E, SqlClient.SqlClient | SafeFs>
) =>
  temp.withDatabase(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* initializeDatabase("context.db", InstallationId.make(INSTALLATION))
      const dir = NodePath.join(temp.dir(), "capture", "spool")
      Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
      const put = (name: string, content: string | CaptureRecord) =>
        Fs.writeFileSync(NodePath.join(dir, name), typeof content === "string" ? content : JSON.stringify(content))
      const store = makeCaptureStore({ sql, database: "context.db" })
      return yield* use({ dir, put, drain: drainSpool(dir, store, Effect.succeed(expected)) })
    })
  )

const bindings = Effect.flatMap(SqlClient.SqlClient, (sql) => sql<BindingRow>`SELECT * FROM capture_bindings`)
const events = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ spool_file: string; event: string }>`SELECT spool_file, event FROM capture_events ORDER BY id`
)
const rejections = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ spool_file: string; reason: string }>`SELECT spool_file, reason FROM capture_rejections ORDER BY id`
)

describe("spool names", () => {
  it("tell records from a writer's temp files and anything else", () => {
    expect(spoolEntryKind("1767225600000-4242-0a1b2c3d4e5f6a7b.json")).toBe("record")
    expect(spoolEntryKind(".1767225600000-4242-0a1b2c3d4e5f6a7b.json.tmp")).toBe("temp")
    expect(spoolEntryKind("notes.txt")).toBe("other")
    expect(inArrivalOrder(["20-1-b.json", "3-9-a.json", "20-1-a.json"])).toEqual([
      "3-9-a.json",
      "20-1-a.json",
      "20-1-b.json"
    ])
  })
})

describe("judging a capture", () => {
  it("accepts a record of this installation and a registered generation", () => {
    expect(judgeCapture(JSON.stringify(record()), expected)).toEqual(Either.right(record()))
  })

  it("refuses what is not JSON, not a record, another installation's or a stale generation's", () => {
    expect(judgeCapture("{not json", expected)).toEqual(Either.left("not valid JSON"))
    const partial = judgeCapture(JSON.stringify({ ...record(), binding_key: "nope" }), expected)
    expect(Either.isLeft(partial) && partial.left).toMatch(/^not a capture record \(binding_key: /)
    const other = judgeCapture(JSON.stringify(record({ installation_id: OLD_GENERATION })), expected)
    expect(Either.isLeft(other) && other.left).toBe(`written for installation ${OLD_GENERATION}, not this one`)
    const stale = judgeCapture(JSON.stringify(record({ generation: OLD_GENERATION })), expected)
    expect(Either.isLeft(stale) && stale.left).toContain("is not registered now (a stale hook)")
  })

  it("accepts a Claude Code record of a claude_hooks generation, and refuses one agent's record under the other's generation", () => {
    const claude = record({
      agent: "claude",
      generation: CLAUDE_GENERATION,
      agent_home: "/home/a/.claude",
      turn_id: null
    })
    expect(judgeCapture(JSON.stringify(claude), expected)).toEqual(Either.right(claude))
    const crossed = judgeCapture(JSON.stringify(record({ agent: "claude" })), expected)
    expect(Either.isLeft(crossed) && crossed.left).toBe(
      `hook generation ${GENERATION} is registered for codex, not claude`
    )
    const otherWay = judgeCapture(JSON.stringify(record({ generation: CLAUDE_GENERATION })), expected)
    expect(Either.isLeft(otherWay) && otherWay.left).toContain("is registered for claude, not codex")
  })
})

describe("a binding after another event", () => {
  const first = mergeBinding(undefined, record({ transcript_path: null, received_at: "2026-03-01T10:00:00.000Z" }))

  it("waits for a path while none came, and takes the first usable one", () => {
    expect(first).toMatchObject({ state: "awaiting_path", transcript_path: null })
    const withPath = mergeBinding(first, record({ received_at: "2026-03-01T10:01:00.000Z" }))
    expect(withPath).toMatchObject({ state: "pending", transcript_path: record().transcript_path })
    // A later null never clears it.
    const laterNull = mergeBinding(withPath, record({ transcript_path: null, received_at: "2026-03-01T10:02:00.000Z" }))
    expect(laterNull).toMatchObject({ state: "pending", transcript_path: record().transcript_path })
  })

  it("lets the newer event decide, whatever order they were drained in", () => {
    const newer = mergeBinding(first, record({ cwd: "/home/a/newer", received_at: "2026-03-01T11:00:00.000Z" }))
    const older = mergeBinding(newer, record({ cwd: "/home/a/older", received_at: "2026-03-01T09:00:00.000Z" }))
    expect(older).toMatchObject({
      cwd: "/home/a/newer",
      first_event_at: "2026-03-01T09:00:00.000Z",
      last_event_at: "2026-03-01T11:00:00.000Z"
    })
  })

  it("makes an indexed binding pending again on a newer event", () => {
    const indexed: BindingRow = { ...mergeBinding(undefined, record()), state: "indexed" }
    expect(mergeBinding(indexed, record({ received_at: "2026-03-01T12:00:00.000Z" })).state).toBe("pending")
  })
})

describe("draining the spool", () => {
  it.effect("records good captures in arrival order, counts them by event, and empties the spool", () =>
    withSpool(({ dir, put, drain }) =>
      Effect.gen(function* () {
        put(
          "1000-1-aa.json",
          record({ event: "SessionStart", transcript_path: null, received_at: "2026-03-01T09:59:00.000Z" })
        )
        put("2000-1-bb.json", record({ event: "UserPromptSubmit" }))
        put("3000-1-cc.json", record({ event: "Stop" }))
        const outcome = yield* drain
        expect(outcome).toMatchObject({ recorded: 3, rejected: 0, duplicates: 0 })
        expect(Fs.readdirSync(dir)).toEqual([])
        expect((yield* events).map((e) => e.event)).toEqual(["SessionStart", "UserPromptSubmit", "Stop"])
        const [binding] = yield* bindings
        expect(binding).toMatchObject({
          binding_key: BINDING,
          state: "pending",
          transcript_path: record().transcript_path,
          first_event_at: "2026-03-01T09:59:00.000Z",
          last_event_at: "2026-03-01T10:00:00.000Z"
        })
        const counts = yield* readCaptureCounts({ generations: [GENERATION] })
        expect(counts).toMatchObject({
          events: { SessionStart: 1, UserPromptSubmit: 1, Stop: 1, SessionEnd: 0 },
          pending: 1,
          null_paths: 0,
          errors: 0,
          last_event_at: "2026-03-01T10:00:00.000Z",
          last_error: null
        })
        // Another generation's status counts none of it.
        expect((yield* readCaptureCounts({ generations: [OLD_GENERATION] })).events.Stop).toBe(0)
      })
    ).pipe(Effect.provide(TestLayer))
  )

  it.effect("refuses and removes a malformed file and a stale generation's, keeping the reasons", () =>
    withSpool(({ dir, put, drain }) =>
      Effect.gen(function* () {
        put("1000-1-aa.json", "{ half a rec")
        put("2000-1-bb.json", record({ generation: OLD_GENERATION }))
        put("3000-1-cc.json", record())
        expect(yield* drain).toMatchObject({ recorded: 1, rejected: 2 })
        expect(Fs.readdirSync(dir)).toEqual([])
        expect(yield* rejections).toEqual([
          { spool_file: "1000-1-aa.json", reason: "not valid JSON" },
          { spool_file: "2000-1-bb.json", reason: expect.stringContaining("a stale hook") }
        ])
        const counts = yield* readCaptureCounts({ generations: [GENERATION] })
        expect(counts.errors).toBe(2)
        expect(counts.last_error).toContain("a stale hook")
      })
    ).pipe(Effect.provide(TestLayer))
  )

  it.live("leaves a writer's temp file alone, and removes one left behind long ago", () =>
    withSpool(({ dir, put, drain }) =>
      Effect.gen(function* () {
        put(".4000-1-dd.json.tmp", "{ being written")
        put(".1000-1-aa.json.tmp", "{ abandoned")
        const longAgo = new Date(Date.now() - 60 * 60 * 1000)
        Fs.utimesSync(NodePath.join(dir, ".1000-1-aa.json.tmp"), longAgo, longAgo)
        expect(yield* drain).toMatchObject({ recorded: 0, rejected: 0, tempRemoved: 1 })
        expect(Fs.readdirSync(dir)).toEqual([".4000-1-dd.json.tmp"])
        expect(yield* events).toEqual([])
        expect(yield* rejections).toEqual([])
      })
    ).pipe(Effect.provide(TestLayer))
  )

  it.effect("never reads a record swapped for a link after its lstat; the next pass refuses the link", () =>
    Effect.suspend(() => {
      const path = NodePath.join(temp.dir(), "capture", "spool", "3000-1-cc.json")
      const outside = outsideFile(
        NodePath.join(temp.dir(), "outside.json"),
        JSON.stringify(record({ turn_id: "forged" }))
      )
      const swapping = swappingSafeFs({ path, swap: symlinkSwap(path, outside.path) })
      return withSpool(({ dir, put, drain }) =>
        Effect.gen(function* () {
          put("3000-1-cc.json", record())
          expect(yield* drain.pipe(Effect.provide(swapping))).toMatchObject({ recorded: 0, kept: 1 })
          expect(yield* events).toEqual([])
          expect(yield* drain).toMatchObject({ recorded: 0, rejected: 1 })
          expect(Fs.readdirSync(dir)).toEqual([])
          expect(outside.untouched()).toBe(true)
        })
      ).pipe(Effect.provide(TestLayer))
    })
  )

  it.effect("counts an event once when a crash left its file after the commit", () =>
    withSpool(({ dir, put, drain }) =>
      Effect.gen(function* () {
        put("1000-1-aa.json", record())
        put("2000-1-bb.json", "not json")
        yield* drain
        // As if the daemon had died between the commit and the delete: the same files again.
        put("1000-1-aa.json", record())
        put("2000-1-bb.json", "not json")
        expect(yield* drain).toMatchObject({ recorded: 0, duplicates: 1, rejected: 0 })
        expect(Fs.readdirSync(dir)).toEqual([])
        expect(yield* events).toHaveLength(1)
        expect(yield* rejections).toHaveLength(1)
        expect((yield* readCaptureCounts({ generations: [GENERATION] })).events.Stop).toBe(1)
      })
    ).pipe(Effect.provide(TestLayer))
  )

  it.effect("keeps a binding waiting for its path until an event brings one", () =>
    withSpool(({ put, drain }) =>
      Effect.gen(function* () {
        put(
          "1000-1-aa.json",
          record({ event: "SessionStart", transcript_path: null, received_at: "2026-03-01T09:00:00.000Z" })
        )
        yield* drain
        expect(yield* bindings).toMatchObject([{ state: "awaiting_path", transcript_path: null }])
        expect((yield* readCaptureCounts({ generations: [GENERATION] })).null_paths).toBe(1)
        put("2000-1-bb.json", record({ event: "Stop" }))
        yield* drain
        expect(yield* bindings).toMatchObject([{ state: "pending", transcript_path: record().transcript_path }])
        expect((yield* readCaptureCounts({ generations: [GENERATION] })).null_paths).toBe(0)
      })
    ).pipe(Effect.provide(TestLayer))
  )

  it.effect("drains nothing, and reads no manifest, from a missing or empty spool", () =>
    temp
      .withDatabase(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* initializeDatabase("context.db", InstallationId.make(INSTALLATION))
          const store = makeCaptureStore({ sql, database: "context.db" })
          const outcome = yield* drainSpool(NodePath.join(temp.dir(), "no-spool"), store, Effect.die("not asked"))
          expect(outcome).toMatchObject({ recorded: 0, rejected: 0, tempRemoved: 0 })
        })
      )
      .pipe(Effect.provide(TestLayer))
  )
})
