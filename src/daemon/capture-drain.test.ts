import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Schema } from "effect"
import { spoolDirIn } from "../capture/capture-paths.js"
import type { CaptureRecord } from "../capture/capture-record.js"
import { Manifest } from "../ownership/manifest.js"
import type { ContextStatusResponse } from "../retrieval/context-status.js"
import { inProcessClient, TEST_INSTALLATION } from "./daemon-core.test-support.js"

// The daemon side of capture, in process: a hook's spooled record is all it takes for the
// transcript it names to be indexed; nobody calls `index`.

const fixture = NodePath.resolve(import.meta.dirname, "..", "..", "fixtures", "codex", "new-format-turn-ids.jsonl")
const GENERATION = "0a0b0c0d-1e1f-4a2b-8c3d-4e5f6a7b8c9d"

type Client = Effect.Effect.Success<typeof inProcessClient>["client"]

/** The active manifest of TEST_INSTALLATION, with hooks of GENERATION registered. */
const writeManifest = (path: string) => {
  const at = "2026-03-01T09:00:00.000Z"
  const manifest = new Manifest({
    version: 1,
    installation_id: TEST_INSTALLATION,
    state: "active",
    owned_files: [],
    created_directories: [],
    node: "/usr/bin/node",
    cli: "/usr/bin/blctx",
    created_at: at,
    updated_at: at,
    choices: { hooks: "installed" },
    codex_hooks: [
      { codex_home: "/home/a/.codex", hooks_file: "/home/a/.codex/hooks.json", generation: GENERATION, entries: [] }
    ]
  })
  Fs.writeFileSync(path, JSON.stringify(Schema.encodeSync(Manifest)(manifest)), { mode: 0o600 })
}

/** Asks ContextStatus until `done` holds (a generous bound, never a fixed sleep). */
const statusWhen = (client: Client, what: string, done: (s: ContextStatusResponse) => boolean) =>
  Effect.gen(function* () {
    while (true) {
      const status = yield* client.ContextStatus()
      if (done(status)) return status
      yield* Effect.sleep(Duration.millis(50))
    }
  }).pipe(
    Effect.mapError((e) => new Error(e.message)),
    Effect.timeoutFail({ duration: Duration.minutes(2), onTimeout: () => new Error(`gave up waiting for ${what}`) })
  )

describe("capture in the daemon", () => {
  it.live("indexes the transcript a spooled Stop record names, with no index call", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client, paths } = yield* inProcessClient
        writeManifest(paths.manifest)
        // Inside the agent home's session folders: the only place a captured path is read from.
        const codexHome = NodePath.resolve(paths.dataDir, "..", "codex")
        const transcript = NodePath.join(codexHome, "sessions", "2026", "03", "01", "rollout-2026-03-01-x.jsonl")
        Fs.mkdirSync(NodePath.dirname(transcript), { recursive: true })
        Fs.copyFileSync(fixture, transcript)
        const spool = spoolDirIn(paths.dataDir)
        Fs.mkdirSync(spool, { recursive: true, mode: 0o700 })
        const record: CaptureRecord = {
          v: 1,
          installation_id: TEST_INSTALLATION,
          generation: GENERATION,
          agent: "codex",
          agent_home: codexHome,
          event: "Stop",
          event_session_id: "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000",
          binding_key: "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d",
          session_uuid: "3c3c3c3c-4d4d-4e5e-8f6f-7a7a7a7a7a7a",
          turn_id: "turn-1",
          cwd: "/home/a/project",
          transcript_path: transcript,
          received_at: "2026-03-01T10:00:00.000Z"
        }
        Fs.writeFileSync(NodePath.join(spool, "1772359200000-4242-0a1b2c3d.json"), JSON.stringify(record))

        const status = yield* statusWhen(
          client,
          "the captured session to be indexed",
          (s) => s.capture.indexed_sessions === 1
        )
        expect(status.capture).toMatchObject({
          events: { SessionStart: 0, UserPromptSubmit: 0, Stop: 1, SessionEnd: 0 },
          pending: 0,
          null_paths: 0,
          errors: 0,
          last_event_at: "2026-03-01T10:00:00.000Z",
          last_error: null
        })
        expect(Fs.readdirSync(spool)).toEqual([])
        expect(status.coverage.files.indexed).toBe(1)
        expect(status.recent_jobs.some((j) => j.kind === "import" && j.state === "completed")).toBe(true)
        const found = yield* client.Search({ query: "failing date test" })
        expect(found.results[0]?.source).toMatchObject({ kind: "transcript_span", path: transcript })

        // A record of a generation the manifest does not register is refused, with its reason.
        Fs.writeFileSync(
          NodePath.join(spool, "1772359300000-4242-0b1b2c3d.json"),
          JSON.stringify({ ...record, generation: "1b1b1b1b-2c2c-4d3d-8e4e-5f5f5f5f5f5f" })
        )
        const refused = yield* statusWhen(client, "the stale record to be refused", (s) => s.capture.errors === 1)
        expect(refused.capture.last_error).toContain("a stale hook")
        expect(refused.capture.events.Stop).toBe(1)
      })
    )
  )
})
