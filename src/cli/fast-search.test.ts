import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { ConfigProvider, Effect, Either, Schema } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { nodeHookFs } from "../../layers/node-hook-fs.js"
import { exitFailure, exitSuccess, listenRecallServer } from "../capture/recall-server.test-support.js"
import { Paths } from "../paths/paths.js"
import { resolvePathsFromEnv } from "../paths/resolve-paths.js"
import { SearchRequest, SearchResponse } from "../retrieval/contract.js"
import { DaemonBusy, DaemonUnavailable, daemonBusy } from "../rpc/errors.js"
import { notAnsweringReason, notAnsweringRemediation } from "../rpc/not-answering.js"
import { socketPathIn } from "../rpc/socket-location.js"
import { stringifyForTerminal } from "../terminal/sanitize.js"
import { ansiStyle, plainStyle } from "../terminal/style.js"
import { askSearch, fastSearch, installedSocket, printAnswer, recognizeSearch, type Terminal } from "./fast-search.js"
import { renderSearch } from "./search-render.js"

const pipe: Terminal = { isTTY: false, columns: undefined }

let dir: string
beforeEach(() => {
  dir = Fs.realpathSync(Fs.mkdtempSync(NodePath.join(tmpdir(), "bfs-")))
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

const defaults = { limit: 10, offset: 0, filters: {} }

describe("recognizeSearch: what the fast path answers", () => {
  it.each([
    [["search", "deploy"], { query: "deploy", ...defaults }],
    [["search", "blue-green", "rollout"], { query: "blue-green rollout", ...defaults }],
    [["search", " padded ", "words "], { query: "padded  words", ...defaults }],
    [["--json", "search", "x", "--no-color"], { query: "x", ...defaults }],
    [
      ["search", "a", "--limit", "5", "b", "--offset", "10", "--agent", "claude", "--source-type", "authored_update"],
      { query: "a b", limit: 5, offset: 10, filters: { agent: "claude", source_type: "authored_update" } }
    ],
    [
      [
        "search",
        "--project",
        "/srv/app",
        "--session",
        "s-1",
        "--since",
        "2026-01-02",
        "--until",
        "2026-02-01T10:00Z",
        "q"
      ],
      {
        query: "q",
        ...defaults,
        filters: { project: "/srv/app", session: "s-1", since: "2026-01-02", until: "2026-02-01T10:00Z" }
      }
    ],
    [["search", "q", "--limit", "100", "--offset", "10000"], { query: "q", limit: 100, offset: 10_000, filters: {} }]
  ])("%j", (argv, expected) => {
    const request = recognizeSearch(argv)?.request
    expect(request).toEqual(expected)
    // What it sends, the daemon's schema decodes to the same request.
    expect(Schema.decodeUnknownSync(SearchRequest)(request)).toEqual(expected)
  })

  it("reads the output flags; readable output is answered too, at a terminal or with --pretty", () => {
    const plain = { json: false, noColor: false, pretty: false }
    expect(recognizeSearch(["search", "q", "--json"])).toEqual({
      request: { query: "q", ...defaults },
      flags: { ...plain, json: true }
    })
    expect(recognizeSearch(["search", "q"])).toEqual({ request: { query: "q", ...defaults }, flags: plain })
    expect(recognizeSearch(["search", "--pretty", "q", "--no-color"])).toEqual({
      request: { query: "q", ...defaults },
      flags: { ...plain, pretty: true, noColor: true }
    })
  })

  it("takes every argument after -- as a word of the query, as the full CLI does", () => {
    expect(recognizeSearch(["search", "--limit", "5", "--", "--q", "--limit", "x", "--", "--json"])).toEqual({
      request: { query: "--q --limit x -- --json", limit: 5, offset: 0, filters: {} },
      flags: { json: false, noColor: false, pretty: false }
    })
    expect(recognizeSearch(["search", "rollout", "--pretty", "--", "deploy"])?.request.query).toBe("rollout deploy")
    expect(recognizeSearch(["search", "--"])).toBeUndefined()
    expect(recognizeSearch(["search", "--", " "])).toBeUndefined()
  })

  it.each([
    [[]],
    [["status"]],
    [["search"]],
    [["search", "  "]],
    [["search", "q", ""]],
    [["search", "q", "--help"]],
    [["search", "-h"]],
    // @effect/cli reads a boolean's value from the next argument; --pretty twice makes a word of the second.
    [["search", "q", "--pretty", "false"]],
    [["search", "q", "--pretty", "yes"]],
    [["search", "q", "--pretty", "--pretty"]],
    [["search", "q", "--pretty=true"]],
    [["search", "-x"]],
    [["search", "q", "--limit=5"]],
    [["search", "q", "--limit"]],
    [["search", "q", "--limit", "0"]],
    [["search", "q", "--limit", "101"]],
    [["search", "q", "--limit", "05"]],
    [["search", "q", "--limit", "+5"]],
    [["search", "q", "--limit", "1e1"]],
    [["search", "q", "--offset", "10001"]],
    [["search", "q", "--limit", "5", "--limit", "6"]],
    [["search", "q", "--agent", "cursor"]],
    [["search", "q", "--source-type", "note"]],
    [["search", "q", "--since", "-1"]],
    [["search", "q", "--project", ""]],
    [["search", "q", "--Limit", "5"]],
    [["recent"]],
    [["q", "search"]]
  ])("falls back for %j", (argv) => {
    expect(recognizeSearch(argv)).toBeUndefined()
  })
})

describe("the socket, found as the full CLI finds it", () => {
  const viaPathsService = (env: Record<string, string>) =>
    Effect.runSync(
      Paths.pipe(
        Effect.map((p) => socketPathIn(p.stateDir)),
        Effect.provide(Paths.Default),
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))),
        Effect.either
      )
    )

  it.each([
    [{ HOME: "/home/me" }],
    [{ HOME: "/home/me/", XDG_STATE_HOME: "/srv//state/" }],
    [{ HOME: "/home/me", XDG_STATE_HOME: "relative/state" }],
    [{ HOME: "/home/me", XDG_STATE_HOME: "" }],
    [{ HOME: "/home/me", XDG_DATA_HOME: "/data", XDG_STATE_HOME: "/run/state" }],
    [{ HOME: "relative" }],
    [{ HOME: "" }],
    [{}]
  ])("%j", (env) => {
    const service = viaPathsService(env)
    const fast = resolvePathsFromEnv(env)
    if (Either.isLeft(service)) expect(fast).toBeUndefined()
    else expect(fast === undefined ? undefined : socketPathIn(fast.stateDir)).toBe(service.right)
  })

  const installedHome = (manifest: unknown, mode = 0o700) => {
    const stateDir = NodePath.join(dir, "state", "blctx")
    Fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 })
    Fs.chmodSync(stateDir, mode)
    if (manifest !== undefined) {
      const text = typeof manifest === "string" ? manifest : JSON.stringify(manifest)
      Fs.writeFileSync(NodePath.join(stateDir, "installation.json"), text, { mode: 0o600 })
    }
    return { HOME: dir, XDG_STATE_HOME: NodePath.join(dir, "state") }
  }

  it("is the state directory's socket when an active manifest is there", () => {
    const env = installedHome({ version: 1, state: "active" })
    expect(installedSocket(env, nodeHookFs)).toBe(NodePath.join(dir, "state", "blctx", "blctxd.sock"))
  })

  it.each([
    ["no manifest", undefined, 0o700],
    ["an uninstalled one", { version: 1, state: "uninstalled" }, 0o700],
    ["one that is not JSON", "{", 0o700],
    ["a state directory others can enter", { version: 1, state: "active" }, 0o755]
  ])("is refused with %s", (_what, manifest, mode) => {
    expect(installedSocket(installedHome(manifest, mode), nodeHookFs)).toEqual({ ok: false, reason: "not_installed" })
  })
})

/** An answer with both kinds of source, nulls, and a field this build does not know. */
const sampleSearchResponse = {
  query: "deploy rollout",
  query_mode: "lexical",
  query_mode_reason: "the embedding model is not installed\u009b",
  results: [
    {
      context_id: "ctx-1",
      text: "We roll out \u202eblue-green\u202c first.\u001b[31m",
      text_truncated: false,
      source_type: "codex_transcript",
      agent: "codex",
      session_id: "019a0000-0000-7000-8000-00000000000a",
      turn_id: "turn-3",
      turn_number: 3,
      role: "assistant",
      kind: "message",
      project: "/srv/app",
      timestamp: "2026-01-02T10:00:00.000Z",
      source: {
        kind: "transcript_span",
        agent: "codex",
        path: "/home/me/.codex/sessions/rollout-a.jsonl",
        line: 42,
        byte_start: 1000,
        byte_end: 1200
      },
      chunk: { ordinal: 0, char_start: 0, char_end: 30 },
      score: { kind: "bm25", value: -(0.1 + 0.2) / 1e7 }
    },
    {
      context_id: "ctx-2",
      text: "keep the migration reversible",
      text_truncated: true,
      source_type: "authored_update",
      agent: null,
      session_id: null,
      turn_id: null,
      turn_number: 0,
      role: "note",
      kind: "note",
      project: null,
      timestamp: null,
      source: { kind: "note_revision", note_id: "n-1", revision: 2, revisions: 2 },
      chunk: { ordinal: 1, char_start: 10, char_end: 39 },
      score: { kind: "bm25", value: -0.5 },
      added_later: "ignored by this build"
    }
  ],
  offset: 0,
  limit: 2,
  next_offset: 2,
  truncated: true,
  returned_chars: 59
}

/** What the full CLI prints for a wire answer: the RPC client's Schema decoding, then `emit`. */
const fullCliOutput = (wire: unknown) => `${stringifyForTerminal(Schema.decodeUnknownSync(SearchResponse)(wire))}\n`

describe("askSearch", () => {
  const socketPath = () => NodePath.join(dir, "d.sock")
  const request = { query: "deploy rollout", limit: 2, offset: 0, filters: { agent: "codex" } }

  it("prints the answer byte for byte as the full CLI does, after sending a Search frame the daemon decodes", async () => {
    // The wire form: what the daemon encodes, through JSON.
    const wire = JSON.parse(
      JSON.stringify(Schema.encodeSync(SearchResponse)(Schema.decodeUnknownSync(SearchResponse)(sampleSearchResponse)))
    )
    const withExtra = { ...wire, added_later: 1 }
    const server = await listenRecallServer(socketPath(), (r) => `{"_tag":"Pong"}\n${exitSuccess(r.id, withExtra)}`)
    try {
      const result = await askSearch(socketPath(), request, 5_000)
      expect(result.ok).toBe(true)
      expect(result.ok && printAnswer(result.answer, { readable: false, color: false, width: undefined })).toBe(
        fullCliOutput(withExtra)
      )
      expect(server.received).toEqual([{ id: "1", tag: "Search", payload: request }])
      expect(Schema.decodeUnknownSync(SearchRequest)(server.received[0]?.payload)).toEqual(request)
    } finally {
      await server.close()
    }
  })

  it.each([
    ["an error answer", (id: string) => exitFailure(id), "error_answer"],
    ["a defect", () => `${JSON.stringify({ _tag: "Defect", defect: "boom" })}\n`, "error_answer"],
    ["a line that is not JSON", () => "{not json\n", "malformed_answer"],
    [
      "an answer of another shape",
      (id: string) => exitSuccess(id, { ...sampleSearchResponse, query_mode: "semantic" }),
      "malformed_answer"
    ],
    [
      "a non-integer where the schema says Int",
      (id: string) => exitSuccess(id, { ...sampleSearchResponse, offset: 1.5 }),
      "malformed_answer"
    ]
  ])("fails on %s", async (_what, answer, reason) => {
    const server = await listenRecallServer(socketPath(), (r) => answer(r.id))
    try {
      expect(await askSearch(socketPath(), request, 5_000)).toEqual({ ok: false, reason })
    } finally {
      await server.close()
    }
  })

  const busyAnswer = (id: string) => exitFailure(id, Schema.encodeSync(DaemonBusy)(daemonBusy(12, 12)))

  it("asks a busy daemon again within the deadline, as the full CLI's client does, and takes the answer that follows", async () => {
    const wire = JSON.parse(JSON.stringify(sampleSearchResponse))
    let asked = 0
    const server = await listenRecallServer(socketPath(), (r) =>
      ++asked <= 3 ? busyAnswer(r.id) : exitSuccess(r.id, wire)
    )
    try {
      const result = await askSearch(socketPath(), request, 5_000)
      expect(result.ok && printAnswer(result.answer, { readable: false, color: false, width: undefined })).toBe(
        fullCliOutput(wire)
      )
      expect(server.received.map((r) => r.payload)).toEqual([request, request, request, request])
    } finally {
      await server.close()
    }
  })

  it.each([
    ["busy every time", (id: string) => busyAnswer(id)],
    ["busy, then silent", (id: string, asked: number) => (asked === 1 ? busyAnswer(id) : undefined)]
  ])("a daemon %s is busy at the deadline, not silent, and the full CLI reports it", async (_what, answer) => {
    let asked = 0
    const server = await listenRecallServer(socketPath(), (r) => answer(r.id, ++asked))
    try {
      expect(await askSearch(socketPath(), request, 400)).toEqual({ ok: false, reason: "busy" })
      expect(server.received.length).toBeGreaterThan(1)
    } finally {
      await server.close()
    }
  })

  it("the shapes it refuses, the full CLI's decoding refuses too", () => {
    for (const wrong of [
      { ...sampleSearchResponse, query_mode: "semantic" },
      { ...sampleSearchResponse, offset: 1.5 }
    ]) {
      expect(Either.isLeft(Schema.decodeUnknownEither(SearchResponse)(wrong))).toBe(true)
    }
  })

  it("fails without a socket, and when no answer comes in time", async () => {
    expect(await askSearch(socketPath(), request, 5_000)).toEqual({ ok: false, reason: "unavailable" })
    const server = await listenRecallServer(socketPath(), () => undefined)
    try {
      expect(await askSearch(socketPath(), request, 100)).toEqual({ ok: false, reason: "timeout" })
    } finally {
      await server.close()
    }
  })
})

describe("fastSearch", () => {
  it("answers only an installed home's daemon, and falls back (undefined) otherwise", async () => {
    const stateDir = NodePath.join(dir, "s", "blctx")
    Fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 })
    const env = { HOME: dir, XDG_STATE_HOME: NodePath.join(dir, "s") }
    const wire = JSON.parse(JSON.stringify(sampleSearchResponse))
    const server = await listenRecallServer(NodePath.join(stateDir, "blctxd.sock"), (r) => exitSuccess(r.id, wire))
    try {
      expect(await fastSearch(["search", "q"], env, pipe, nodeHookFs)).toBeUndefined()
      Fs.writeFileSync(NodePath.join(stateDir, "installation.json"), JSON.stringify({ state: "active" }), {
        mode: 0o600
      })
      expect(await fastSearch(["search", "q"], env, pipe, nodeHookFs)).toEqual({
        stdout: fullCliOutput(wire),
        stderr: "",
        exitCode: 0
      })
      expect(await fastSearch(["search", "q", "--pretty", "false"], env, pipe, nodeHookFs)).toBeUndefined()
      expect(server.received).toHaveLength(1)
    } finally {
      await server.close()
    }
  })

  it("prints readable text as the full CLI's emit does: --pretty or a terminal, its colors and its width", async () => {
    const stateDir = NodePath.join(dir, "s", "blctx")
    Fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 })
    Fs.writeFileSync(NodePath.join(stateDir, "installation.json"), JSON.stringify({ state: "active" }), { mode: 0o600 })
    const env = { HOME: dir, XDG_STATE_HOME: NodePath.join(dir, "s") }
    const wire = JSON.parse(JSON.stringify(sampleSearchResponse))
    const decoded = Schema.decodeUnknownSync(SearchResponse)(wire)
    const server = await listenRecallServer(NodePath.join(stateDir, "blctxd.sock"), (r) => exitSuccess(r.id, wire))
    const stdoutOf = async (argv: ReadonlyArray<string>, e: NodeJS.ProcessEnv, terminal: Terminal) =>
      (await fastSearch(argv, e, terminal, nodeHookFs))?.stdout
    const tty = { isTTY: true, columns: 100 }
    try {
      expect(await stdoutOf(["search", "q", "--pretty"], env, pipe)).toBe(`${renderSearch(decoded, plainStyle)}\n`)
      expect(await stdoutOf(["search", "q", "--pretty"], { ...env, COLUMNS: "80" }, pipe)).toBe(
        `${renderSearch(decoded, plainStyle, 80)}\n`
      )
      expect(await stdoutOf(["search", "q"], env, tty)).toBe(`${renderSearch(decoded, ansiStyle, 100)}\n`)
      expect(await stdoutOf(["search", "q", "--no-color"], env, tty)).toBe(
        `${renderSearch(decoded, plainStyle, 100)}\n`
      )
      expect(await stdoutOf(["search", "q"], { ...env, NO_COLOR: "1" }, tty)).toBe(
        `${renderSearch(decoded, plainStyle, 100)}\n`
      )
      expect(await stdoutOf(["search", "q", "--json", "--pretty"], env, tty)).toBe(fullCliOutput(wire))
    } finally {
      await server.close()
    }
  })

  it("a daemon that accepts but does not answer: the not-answering error at the deadline, no fallback", async () => {
    const stateDir = NodePath.join(dir, "s", "blctx")
    Fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 })
    const env = { HOME: dir, XDG_STATE_HOME: NodePath.join(dir, "s") }
    Fs.writeFileSync(NodePath.join(stateDir, "installation.json"), JSON.stringify({ state: "active" }), { mode: 0o600 })
    Fs.writeFileSync(NodePath.join(stateDir, "blctxd.pid"), "4242\n", { mode: 0o600 })
    const server = await listenRecallServer(NodePath.join(stateDir, "blctxd.sock"), () => undefined)
    try {
      // At a terminal without --json, the full CLI prints the error on stderr only.
      const atTerminal = await fastSearch(["search", "q"], env, { isTTY: true, columns: 80 }, nodeHookFs, 200)
      expect(atTerminal?.stdout).toBe("")
      expect(atTerminal?.exitCode).toBe(1)
      const output = await fastSearch(["search", "q"], env, pipe, nodeHookFs, 200)
      expect(output?.exitCode).toBe(1)
      expect(output?.stderr).toContain("blctxd (pid 4242) is not answering: it may be stopped or overloaded")
      expect(output?.stderr).toContain("kill -CONT 4242")
      // The full CLI's words for the same error, byte for byte.
      const full = new DaemonUnavailable({
        socket: NodePath.join(stateDir, "blctxd.sock"),
        reason: notAnsweringReason(4242),
        remediation: notAnsweringRemediation(4242),
        not_answering: true
      })
      expect(output?.stderr).toBe(`blctx: ${full.message}\n`)
      expect(JSON.parse(output?.stdout ?? "null")).toMatchObject({
        error: { _tag: "DaemonUnavailable" },
        exit_code: 1
      })
    } finally {
      await server.close()
    }
  })
  it("a daemon busy until the deadline: no output here, the full CLI runs and reports it", async () => {
    const stateDir = NodePath.join(dir, "s", "blctx")
    Fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 })
    const env = { HOME: dir, XDG_STATE_HOME: NodePath.join(dir, "s") }
    Fs.writeFileSync(NodePath.join(stateDir, "installation.json"), JSON.stringify({ state: "active" }), { mode: 0o600 })
    const busy = Schema.encodeSync(DaemonBusy)(daemonBusy(12, 12))
    const server = await listenRecallServer(NodePath.join(stateDir, "blctxd.sock"), (r) => exitFailure(r.id, busy))
    try {
      expect(await fastSearch(["search", "q"], env, pipe, nodeHookFs, 300)).toBeUndefined()
      expect(server.received.length).toBeGreaterThan(1)
    } finally {
      await server.close()
    }
  })
})
