import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { NodeSafeFsLive } from "../../../layers/node-safe-fs.js"
import { NodeTranscriptFilesLive } from "../../../layers/node-transcript-files.js"
import { resolvePaths } from "../../paths/paths.js"
import { classifyClaudeTranscript } from "../claude-classify.js"
import { defaultTargets, describeTargets, discoverTranscripts, targetsUnder } from "../discovery.js"
import { readAllRecords } from "../reader.js"
import { claudeFormat } from "./claude-format.js"
import { codexFormat } from "./codex-format.js"
import { formatFor, PROBE_BYTES } from "./registry.js"

const root = NodePath.resolve(import.meta.dirname, "..", "..", "..", "fixtures")
const claudeFixtures = NodePath.join(root, "claude")
const SUBAGENT = NodePath.join(
  claudeFixtures,
  "55555555-5555-4555-8555-555555555555",
  "subagents",
  "agent-a1b2c3d4e5f6a7b8.jsonl"
)
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
  dir = Fs.realpathSync(Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-claude-")))
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

describe("the Claude Code format", () => {
  it("is registered with its agent, source type and home", () => {
    expect([claudeFormat.id, claudeFormat.label, claudeFormat.agent, claudeFormat.sourceType]).toEqual([
      "claude",
      "Claude Code",
      "claude",
      "claude_transcript"
    ])
    expect(claudeFormat.home(resolvePaths({ home: "/home/user" }))).toBe("/home/user/.claude")
    expect(claudeFormat.home(resolvePaths({ home: "/home/user", CLAUDE_CONFIG_DIR: "/srv/claude" }))).toBe(
      "/srv/claude"
    )
    expect(claudeFormat.sessionFolders("/h/.claude")).toEqual([{ path: "/h/.claude/projects", archived: false }])
  })

  it("claims its own files by content whatever their name, and never a Codex file; Codex claims none of its", () => {
    for (const path of jsonlUnder(claudeFixtures)) {
      expect(idOf(path, headOf(path))).toEqual(Either.right("claude"))
      expect(codexFormat.detect({ path, head: headOf(path) })).toBe(false)
      // Renamed to something neutral, the first record alone is enough.
      expect(idOf("/x/renamed.jsonl", headOf(path))).toEqual(Either.right("claude"))
    }
    for (const dir of ["codex", "history"]) {
      for (const path of jsonlUnder(NodePath.join(root, dir))) {
        expect(claudeFormat.detect({ path, head: headOf(path) })).toBe(false)
        // A Codex file named like a Claude Code session is still Codex's.
        expect(
          claudeFormat.detect({
            path: "/h/.claude/projects/p/11111111-1111-4111-8111-111111111111.jsonl",
            head: headOf(path)
          })
        ).toBe(false)
      }
    }
    // A conversation line has `type` after the (long) message: its first field is enough.
    const long = `{"parentUuid":"a","isSidechain":false,"message":{"content":"${"x".repeat(PROBE_BYTES)}`
    expect(idOf("/x/t.jsonl", Buffer.from(long).subarray(0, PROBE_BYTES))).toEqual(Either.right("claude"))
    // By name alone: a session (a UUID) or a sub-agent's file, even before its first line is written.
    expect(idOf("/h/.claude/projects/-home-user/0b5c1e2a-1111-4111-8111-111111111111.jsonl", "")).toEqual(
      Either.right("claude")
    )
    expect(idOf("/h/.claude/projects/p/s/subagents/agent-a1b2c3.jsonl", "")).toEqual(Either.right("claude"))
    expect(idOf("/h/.codex/sessions/rollout-2026-a.jsonl", "")).toEqual(Either.right("codex"))
    expect(Either.isLeft(formatFor("/x/plain.jsonl", '{"type":"note"}\n'))).toBe(true)
  })

  // Opt-in: set BLCTX_REFERENCE_TRANSCRIPTS to the folder of real transcripts.
  it.skipIf(!process.env.BLCTX_REFERENCE_TRANSCRIPTS)(
    "reference transcript (opt-in: runs only when BLCTX_REFERENCE_TRANSCRIPTS is set) is detected as Claude Code",
    () => {
      const refs = process.env.BLCTX_REFERENCE_TRANSCRIPTS ?? ""
      const path = NodePath.join(refs, "claude", "real-session-2.0.28.jsonl")
      expect(idOf(path, headOf(path))).toEqual(Either.right("claude"))
      for (const name of Fs.readdirSync(NodePath.join(refs, "codex"))) {
        const codex = NodePath.join(refs, "codex", name)
        expect(claudeFormat.detect({ path: codex, head: headOf(codex) })).toBe(false)
      }
    }
  )

  it.effect("its classifier and summarizer are the Claude Code classifier; the header reads the first record", () =>
    Effect.gen(function* () {
      const path = NodePath.join(claudeFixtures, "plain-turn.jsonl")
      const { records } = yield* readAllRecords(path)
      const c = claudeFormat.classifier()
      for (const r of records) c.push(r)
      expect(c.finish()).toEqual(classifyClaudeTranscript(records))
      const first = records[0]
      if (first === undefined) return expect.fail("the fixture has records")
      // A queue operation names the session but not the working directory.
      expect(claudeFormat.header(first)).toEqual({ session_id: "11111111-1111-4111-8111-111111111111", cwd: null })
      const sub = (yield* readAllRecords(SUBAGENT)).records[0]
      if (sub === undefined) return expect.fail("the fixture has records")
      expect(claudeFormat.header(sub)).toEqual({
        session_id: "55555555-5555-4555-8555-555555555555/agent-a1b2c3d4e5f6a7b8",
        cwd: "/home/user/project"
      })
    }).pipe(Effect.provide(NodeTranscriptFilesLive))
  )

  it.effect("discovery finds sessions and sub-agents' files under projects/, beside Codex's, following no links", () =>
    Effect.gen(function* () {
      const codex = write(".codex/sessions/2026/03/10/rollout-a.jsonl", "{}\n", 5)
      const session = write(".claude/projects/-home-user-project/11111111-1111-4111-8111-111111111111.jsonl", "{}\n", 1)
      const agent = write(
        ".claude/projects/-home-user-project/11111111-1111-4111-8111-111111111111/subagents/agent-abc.jsonl",
        "{}\n",
        2
      )
      write(
        ".claude/projects/-home-user-project/11111111-1111-4111-8111-111111111111/subagents/agent-abc.meta.json",
        "{}"
      )
      write(".claude/settings.json", "{}")
      write(".claude/history.jsonl", "{}\n")
      Fs.symlinkSync(session, NodePath.join(dir, ".claude", "projects", "linked.jsonl"))
      const paths = resolvePaths({ home: dir })
      const found = yield* discoverTranscripts(defaultTargets(paths))
      expect(found.files.map((f) => [f.path, f.format])).toEqual([
        [session, "claude"],
        [agent, "claude"],
        [codex, "codex"]
      ])
      expect(found.skippedLinks).toBe(1)
      expect(found.homes.map((h) => [h.format, h.label, h.home, h.total])).toEqual([
        ["codex", "Codex", NodePath.join(dir, ".codex"), 1],
        ["claude", "Claude Code", NodePath.join(dir, ".claude"), 2],
        ["gemini", "Gemini CLI", NodePath.join(dir, ".gemini"), 0]
      ])
      expect(describeTargets(defaultTargets(paths, [claudeFormat]))).toBe(NodePath.join(dir, ".claude", "projects"))
      // --root: every format looks for its own folders there.
      const under = yield* discoverTranscripts(targetsUnder(NodePath.join(dir, ".claude")))
      expect(under.files.map((f) => f.format)).toEqual(["claude", "claude"])
    }).pipe(Effect.provide(Layer.merge(NodeSafeFsLive, NodeTranscriptFilesLive)))
  )
})
