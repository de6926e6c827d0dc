import { Effect, Layer, Option } from "effect"
import { InstallationId } from "../domain/installation-id.js"
import { Manifest } from "../ownership/manifest.js"
import { ManifestStore } from "../ownership/manifest-store.js"
import { CaptureStatus } from "../retrieval/capture-status.js"
import { ContextMessage, ContextResponse } from "../retrieval/context.js"
import { ContextStatusResponse } from "../retrieval/context-status.js"
import { NoteRevision, Score, SearchHit, SearchResponse, TranscriptSpan } from "../retrieval/contract.js"
import { Coverage } from "../retrieval/coverage.js"
import { RecentResponse, RecentTurn, TurnMessage } from "../retrieval/recent.js"
import type { BlctxClient } from "../rpc/client.js"
import { DaemonUnavailable } from "../rpc/errors.js"
import { type FakeAnswers, fakeDaemonClient } from "../rpc/fake-daemon.test-support.js"
import { DaemonIdentity } from "../rpc/protocol.js"
import { DaemonSession } from "./daemon-session.js"
import { type McpArgs, McpConfig } from "./mcp-config.js"

/** Test support: sample daemon answers, a fake client and the layers a tool call needs. */

export const INSTALLATION = InstallationId.make("6f1f3c3e-8f5e-4a57-9d3b-4d1c2f0e9a11")
export const OTHER_INSTALLATION = InstallationId.make("0b7a1f3e-2c4d-4e5f-8a9b-0c1d2e3f4a5b")

export const ARGS: McpArgs = {
  "installation-id": INSTALLATION,
  "data-home": "/home/a/.local/share",
  "config-home": "/home/a/.config",
  "cache-home": "/home/a/.cache",
  "state-home": "/home/a/.local/state"
}

export const span = new TranscriptSpan({
  agent: "codex",
  path: "/home/a/.codex/sessions/rollout.jsonl",
  line: 7,
  byte_start: 1200,
  byte_end: 1388
})
export const note = new NoteRevision({ note_id: "note-1", revision: 2, revisions: 2 })

export const hit = (overrides: Partial<ConstructorParameters<typeof SearchHit>[0]> = {}) =>
  new SearchHit({
    context_id: "c12",
    text: "We chose a blue-green rollout.",
    text_truncated: false,
    source_type: "codex_transcript",
    agent: "codex",
    session_id: "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000",
    turn_id: "turn-3",
    turn_number: 3,
    role: "assistant",
    kind: "final_answer",
    project: "/home/dev/shop-api",
    timestamp: "2026-02-02T09:00:05.000Z",
    source: span,
    chunk: { ordinal: 0, char_start: 0, char_end: 30 },
    score: new Score({ kind: "bm25", value: -3.2 }),
    ...overrides
  })

export const searchResponse = (results: ReadonlyArray<SearchHit>) =>
  new SearchResponse({
    query: "blue-green rollout",
    query_mode: "lexical",
    query_mode_reason: "the embedding model is not installed",
    results,
    offset: 0,
    limit: 5,
    next_offset: null,
    truncated: false,
    returned_chars: results.reduce((n, r) => n + r.text.length, 0)
  })

export const recentResponse = new RecentResponse({
  since: "2026-02-01T00:00:00.000Z",
  until: null,
  project: null,
  agent: null,
  turns: [
    new RecentTurn({
      session_id: "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000",
      turn_id: "turn-3",
      turn_number: 3,
      project: "/home/dev/shop-api",
      first_activity: "2026-02-02T09:00:00.000Z",
      last_activity: "2026-02-02T09:00:05.000Z",
      message_count: 1,
      messages: [
        new TurnMessage({
          context_id: "m40",
          role: "assistant",
          kind: "final_answer",
          timestamp: "2026-02-02T09:00:05.000Z",
          text: "We chose a blue-green rollout.",
          text_truncated: false,
          source_type: "codex_transcript",
          agent: "codex",
          source: span
        })
      ],
      messages_not_shown: 0
    })
  ],
  offset: 0,
  limit: 20,
  next_offset: null,
  truncated: false,
  returned_chars: 30,
  unknown_timestamps: 0
})

export const contextMessage = (sourceType: string, index = 0) =>
  new ContextMessage({
    context_id: `m${40 + index}`,
    index,
    is_anchor: index === 0,
    role: "assistant",
    kind: "final_answer",
    source_type: sourceType,
    agent: sourceType === "authored_update" ? null : "codex",
    turn_number: 3,
    turn_id: "turn-3",
    timestamp: "2026-02-02T09:00:05.000Z",
    source: sourceType === "authored_update" ? note : span,
    text_length: 30,
    char_offset: 0,
    text: "We chose a blue-green rollout.",
    text_truncated: false
  })

export const contextResponse = (messages: ReadonlyArray<ContextMessage>, sessionId = "session-x") =>
  new ContextResponse({
    context_id: "m40",
    anchor: { context_id: "m40", index: 0, chunk: null },
    session_id: sessionId,
    project: "/home/dev/shop-api",
    total_messages: 1,
    offset: messages.length === 0 ? 1 : 0,
    limit: 20,
    messages,
    next_offset: null,
    next_char_offset: null,
    truncated: false,
    returned_chars: messages.reduce((n, m) => n + m.text.length, 0)
  })

export const contextStatusResponse = new ContextStatusResponse({
  index_state: "model_missing",
  query_mode: "lexical",
  query_mode_reason: "the embedding model is not installed",
  model_fingerprint: null,
  coverage: new Coverage({
    files: { total: 1, indexed: 1, partial: 0, conflict: 0 },
    sessions: 1,
    messages: 24,
    chunks: 24,
    vectors: [],
    vectors_pending: 24,
    unknown_timestamps: 0,
    redactions: 0,
    sources_changed: 0,
    sources_missing: 0,
    sources_unreadable: 0,
    changed_sources: [],
    partial_imports: [],
    conflicts: [],
    capture: "Querying never captures new activity by itself."
  }),
  recent_jobs: [],
  capture: new CaptureStatus({
    events: { SessionStart: 2, UserPromptSubmit: 5, Stop: 5, SessionEnd: 1 },
    pending: 1,
    null_paths: 0,
    errors: 1,
    refused: 0,
    indexed_sessions: 2,
    last_event_at: "2026-02-02T08:00:00.000Z",
    last_error: "hook generation 1b1b1b1b-2c2c-4d3d-8e4e-5f5f5f5f5f5f is not registered now (a stale hook)"
  })
})

export const identity = (installationId: InstallationId = INSTALLATION) =>
  new DaemonIdentity({
    installation_id: installationId,
    pid: 4242,
    node: "/usr/bin/node",
    argv: [],
    version: "0.1.0",
    db_path: "/home/a/.local/share/blctx/context.db",
    schema_version: 4,
    index_state: "model_missing",
    query_mode: "lexical",
    started_at: "2026-02-02T08:00:00.000Z"
  })

/** A client whose answers are given (`RpcTest` over the group); a call without an answer dies. Scoped. */
export const fakeClient = (answers: FakeAnswers) => fakeDaemonClient(answers)

export const manifest = (state: "active" | "inactive" = "active", installationId: InstallationId = INSTALLATION) =>
  new Manifest({
    version: 1,
    installation_id: installationId,
    state,
    owned_files: [],
    created_directories: [],
    node: "/usr/bin/node",
    cli: "/opt/blctx/dist/bin/blctx.mjs",
    created_at: "2026-02-02T08:00:00.000Z",
    updated_at: "2026-02-02T08:00:00.000Z",
    choices: {}
  })

/** A manifest store that reads the given manifest (or none) and writes nothing. */
export const manifestStore = (current: Option.Option<Manifest>) =>
  Layer.succeed(
    ManifestStore,
    ManifestStore.make({
      path: "/home/a/.local/state/blctx/installation.json",
      read: () => Effect.succeed(current),
      write: () => Effect.dieMessage("the MCP server never writes the manifest"),
      recordOwned: () => Effect.dieMessage("the MCP server never writes the manifest"),
      remove: () => Effect.dieMessage("the MCP server never writes the manifest")
    })
  )

/** A session on the given client, or a daemon that does not answer. */
export const daemonSession = (client: BlctxClient | DaemonUnavailable) =>
  Layer.succeed(
    DaemonSession,
    DaemonSession.of({
      use: (use) => (client instanceof DaemonUnavailable ? Effect.fail(client) : use(client))
    })
  )

export const daemonDown = new DaemonUnavailable({
  socket: "/home/a/.local/state/blctx/blctxd.sock",
  reason:
    "no socket (the daemon is not running); starting it under the detached supervisor failed: blctxd is not installed as a service",
  remediation: "Run: blctx install codex",
  not_running: true
})

/** Everything `callTool` needs, around the given client (or outage) and manifest. */
export const toolLayer = (
  client: BlctxClient | DaemonUnavailable,
  current: Option.Option<Manifest> = Option.some(manifest())
) => Layer.mergeAll(daemonSession(client), manifestStore(current), Layer.succeed(McpConfig, ARGS))
