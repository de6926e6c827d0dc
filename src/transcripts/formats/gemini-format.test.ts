import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { NodeSafeFsLive } from "../../../layers/node-safe-fs.js"
import { NodeTranscriptFilesLive } from "../../../layers/node-transcript-files.js"
import { resolvePaths } from "../../paths/paths.js"
import { KNOWN_AGENTS } from "../../retrieval/known-agents.js"
import { defaultTargets, discoverTranscripts } from "../discovery.js"
import { classifyGeminiTranscript } from "../gemini-classify.js"
import { readAllRecords } from "../reader.js"
import { claudeFormat } from "./claude-format.js"
import { codexFormat } from "./codex-format.js"
import { geminiFormat } from "./gemini-format.js"
import { agentLabel, formatFor, PROBE_BYTES } from "./registry.js"
import { readOptionsOf } from "./transcript-format.js"

const root = NodePath.resolve(import.meta.dirname, "..", "..", "..", "fixtures")
const geminiFixtures = NodePath.join(root, "gemini")
const jsonlUnder = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? jsonlUnder(NodePath.join(dir, e.name))
      : e.name.endsWith(".jsonl")
        ? [NodePath.join(dir, e.name)]
        : []
  )
const headOf = (path: string) => Fs.readFileSync(path).subarray(0, PROBE_BYTES)
const idOf = (path: string, head: Uint8Array | string) => Either.map(formatFor(path, head), (f) => f.id)

let dir: string
beforeEach(() => {
  dir = Fs.realpathSync(Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-gemini-format-")))
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

const write = (relative: string, content: string, minutesAgo = 0) => {
  const path = NodePath.join(dir, relative)
  Fs.mkdirSync(NodePath.dirname(path), { recursive: true })
  Fs.writeFileSync(path, content)
  const when = new Date(Date.parse("2026-03-10T12:00:00Z") - minutesAgo * 60_000)
  Fs.utimesSync(path, when, when)
  return path
}

const HEADER =
  '{"sessionId":"3b8f0a52-6c1e-4d7a-9f20-5e4c3b2a1d00","projectHash":"0f1e","startTime":"2026-03-02T09:00:00Z"}\n'

describe("the Gemini CLI format", () => {
  it("is registered with its agent, source type and home ($GEMINI_CLI_HOME/.gemini, else ~/.gemini)", () => {
    expect([geminiFormat.id, geminiFormat.label, geminiFormat.agent, geminiFormat.sourceType]).toEqual([
      "gemini",
      "Gemini CLI",
      "gemini",
      "gemini_transcript"
    ])
    expect(KNOWN_AGENTS).toContain("gemini")
    expect(agentLabel("gemini")).toBe("Gemini CLI")
    expect(geminiFormat.home(resolvePaths({ home: "/home/user" }))).toBe("/home/user/.gemini")
    expect(geminiFormat.home(resolvePaths({ home: "/home/user", GEMINI_CLI_HOME: "/srv/g" }))).toBe("/srv/g/.gemini")
    expect(geminiFormat.sessionFolders("/h/.gemini")).toEqual([{ path: "/h/.gemini/tmp", archived: false }])
  })

  it("claims its files by header or name; Codex and Claude Code claim none of them, and it claims none of theirs", () => {
    for (const path of jsonlUnder(geminiFixtures)) {
      expect(idOf(path, headOf(path))).toEqual(Either.right("gemini"))
      // The header starts with "sessionId", as some Claude Code records do: Claude Code leaves it.
      expect(claudeFormat.detect({ path, head: headOf(path) })).toBe(false)
      expect(codexFormat.detect({ path, head: headOf(path) })).toBe(false)
      expect(idOf("/x/renamed.jsonl", headOf(path))).toEqual(Either.right("gemini"))
    }
    for (const other of ["codex", "claude", "history"]) {
      for (const path of jsonlUnder(NodePath.join(root, other))) {
        expect(geminiFormat.detect({ path, head: headOf(path) })).toBe(false)
      }
    }
    // By name alone, even before its first line is written.
    expect(idOf("/h/.gemini/tmp/p/chats/session-2026-03-02T09-00-3b8f0a52.jsonl", "")).toEqual(Either.right("gemini"))
    // A Claude Code record that starts with its sessionId is still Claude Code's.
    expect(idOf("/x/t.jsonl", '{"sessionId":"a","type":"user","message":{"content":"hi"}}\n')).toEqual(
      Either.right("claude")
    )
    // Before 0.61 a session was one pretty-printed JSON document: not claimed, so refused with why.
    expect(
      Either.isLeft(formatFor("/h/.gemini/tmp/p/chats/session-2025-01-01T00-00-ab.json", '{\n  "sessionId"'))
    ).toBe(true)
  })

  it.effect("the header gives the session id from the first line and the folder from the session context", () =>
    Effect.gen(function* () {
      const path = NodePath.join(geminiFixtures, "resumed-tool-call.jsonl")
      const { records } = yield* readAllRecords(path, readOptionsOf(geminiFormat))
      const [first, second] = records
      if (first === undefined || second === undefined) return expect.fail("the fixture has records")
      expect(geminiFormat.header(first)).toEqual({ session_id: "4a0db71c-cf50-403e-aaef-e138e941213c", cwd: null })
      expect(geminiFormat.header(second)).toEqual({ session_id: null, cwd: "/home/dev/billing-service" })
      const c = geminiFormat.classifier()
      for (const r of records) c.push(r)
      expect(c.finish()).toEqual(classifyGeminiTranscript(records))
    }).pipe(Effect.provide(NodeTranscriptFilesLive))
  )

  it.effect(
    "discovery finds sessions and sub-agents' files in each project's chats/, nothing else, following no links",
    () =>
      Effect.gen(function* () {
        const session = write(".gemini/tmp/billing/chats/session-2026-03-10T11-59-3b8f0a52.jsonl", HEADER, 1)
        const subagent = write(
          ".gemini/tmp/billing/chats/3b8f0a52-6c1e-4d7a-9f20-5e4c3b2a1d00/9d8b80f6-8d9f-4490-9eae-c51fd1c26638.jsonl",
          HEADER,
          2
        )
        const other = write(".gemini/tmp/ledger/chats/session-2026-03-10T11-00-11111111.jsonl", HEADER, 60)
        // Not sessions: logs, tool output and files at other depths.
        write(".gemini/tmp/billing/logs/events.jsonl", "{}\n")
        write(".gemini/tmp/billing/tool-outputs/out.jsonl", "{}\n")
        write(".gemini/tmp/stray.jsonl", "{}\n")
        write(".gemini/settings.json", "{}")
        Fs.symlinkSync(session, NodePath.join(dir, ".gemini", "tmp", "billing", "chats", "linked.jsonl"))
        const paths = resolvePaths({ home: dir })
        const found = yield* discoverTranscripts(defaultTargets(paths, [geminiFormat]))
        expect(found.files.map((f) => [f.path, f.format])).toEqual([
          [session, "gemini"],
          [subagent, "gemini"],
          [other, "gemini"]
        ])
        expect(found.skippedLinks).toBe(1)
        expect(found.homes.map((h) => [h.format, h.label, h.home, h.total])).toEqual([
          ["gemini", "Gemini CLI", NodePath.join(dir, ".gemini"), 3]
        ])
      }).pipe(Effect.provide(Layer.merge(NodeSafeFsLive, NodeTranscriptFilesLive)))
  )
})
