import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { NodeSafeFsLive } from "../../layers/node-safe-fs.js"
import { NodeTranscriptFilesLive } from "../../layers/node-transcript-files.js"
import { resolvePaths } from "../paths/paths.js"
import { defaultTargets, targetsUnder } from "../transcripts/discovery.js"
import { claudeFormat } from "../transcripts/formats/claude-format.js"
import { type ExploreFileRequest, exploreFile } from "./explore-file.js"
import { listTranscripts } from "./list-transcripts.js"
import { renderFile, renderList } from "./render-explore-text.js"

const fixtures = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..", "..", "fixtures", "codex")
const oldFormat = NodePath.join(fixtures, "old-format-no-turn-ids.jsonl")
const claudeFixtures = NodePath.resolve(NodePath.dirname(fixtures), "claude")
const geminiFixture = NodePath.resolve(NodePath.dirname(fixtures), "gemini", "resumed-tool-call.jsonl")

const explore = (request: Partial<ExploreFileRequest> & { path: string }) =>
  exploreFile({ view: "conversation", details: false, startLine: 1, limit: 20, ...request }).pipe(
    Effect.provide(NodeTranscriptFilesLive)
  )

let dir: string
beforeEach(() => {
  dir = Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-explore-"))
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

describe("exploreFile", () => {
  it.effect("totals cover the whole file whatever page is shown", () =>
    Effect.gen(function* () {
      const page = yield* explore({ path: oldFormat, view: "raw", startLine: 20, limit: 2 })
      expect(page.records?.map((r) => r.line)).toEqual([20, 21])
      expect(page.page).toMatchObject({ unit: "records", shown: 2, next_line: 22 })
      expect(page.totals.records).toBe(22)
      expect(page.totals.by_decision.index).toBe(5)
    })
  )

  it.effect("preview pages by complete turns; --details adds every record's decision of those turns", () =>
    Effect.gen(function* () {
      const preview = yield* explore({ path: oldFormat, view: "preview", details: true, startLine: 3, limit: 1 })
      expect(preview.turns?.map((t) => [t.number, t.first_line, t.last_line])).toEqual([[1, 3, 13]])
      expect(preview.turns?.[0]?.decisions?.map((d) => d.line)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13])
      expect(preview.page.next_line).toBe(14)
      expect(preview.exclusions?.["excluded: token counts"]).toBe(2)
      const plain = yield* explore({ path: oldFormat, view: "preview", startLine: 3, limit: 1 })
      expect(plain.turns?.[0]?.decisions).toBeUndefined()
    })
  )

  it.effect("messages lists candidates (context included) with their decisions", () =>
    Effect.gen(function* () {
      const result = yield* explore({ path: oldFormat, view: "messages", limit: 3 })
      expect(result.candidates?.map((c) => [c.line, c.decision])).toEqual([
        [2, "context_only"],
        [3, "index"],
        [4, "duplicate"]
      ])
      expect(result.candidates?.[2]?.duplicate_of?.line).toBe(3)
      expect(result.page.next_line).toBe(11)
    })
  )

  it.effect("text rendering escapes every control character a transcript contains", () =>
    Effect.gen(function* () {
      const path = NodePath.join(dir, "evil.jsonl")
      const message = "\u001b]0;owned\u0007 \u009b31m red"
      Fs.writeFileSync(path, `${JSON.stringify({ type: "event_msg", payload: { type: "user_message", message } })}\n`)
      for (const view of ["conversation", "preview", "messages", "raw"] as const) {
        const text = renderFile(yield* explore({ path, view, details: true }), true)
        expect(text).not.toContain("\u001b")
        expect(text).not.toContain("\u0007")
        expect(text).not.toContain("\u009b")
        if (view !== "raw") expect(text).toContain("\\x1b]0;owned\\x07")
      }
    })
  )

  it.effect("a missing file or a compressed one is an ExploreFailure with a remediation", () =>
    Effect.gen(function* () {
      const missing = yield* Effect.flip(explore({ path: NodePath.join(dir, "none.jsonl") }))
      expect(missing._tag).toBe("ExploreFailure")
      expect(missing.remediation).toContain("does not exist")
      const zst = yield* Effect.flip(explore({ path: NodePath.join(dir, "x.jsonl.zst") }))
      expect(zst.message).toContain("compressed")
    })
  )

  it.effect("the records before the first turn are not a turn: not counted, and --limit N shows N real turns", () =>
    Effect.gen(function* () {
      // Two turns (lines 3-13 and 14-22) after two records of session metadata and injected context.
      const one = yield* explore({ path: oldFormat, view: "preview", limit: 1 })
      expect(one.totals.turns).toBe(2)
      expect(one.turns?.map((t) => [t.number, t.first_line, t.last_line])).toEqual([
        [0, 1, 2],
        [1, 3, 13]
      ])
      expect(one.page).toMatchObject({ unit: "turns", shown: 1, next_line: 14 })
      const text = renderFile(one, false)
      expect(text).toContain("Before the first turn (lines 1-2, 2 records)")
      expect(text).toContain("Turn 1 (lines 3-13")
      expect(text).not.toContain("Turn 2")
      expect(text.split("\n").at(-1)).toBe(
        `1 turn plus the records before the first turn shown. Next: blctx explore ${oldFormat} --view preview --start-line 14 --limit 1`
      )

      const next = yield* explore({ path: oldFormat, view: "preview", startLine: 14, limit: 1 })
      expect(next.turns?.map((t) => t.number)).toEqual([2])
      expect(next.page).toMatchObject({ shown: 1, next_line: null })
      expect(renderFile(next, false).split("\n").at(-1)).toBe("End of file (1 turn shown from line 14).")

      const all = yield* explore({ path: oldFormat, view: "preview" })
      expect(all.turns?.map((t) => t.number)).toEqual([0, 1, 2])
      expect(all.page.shown).toBe(2)
      const allText = renderFile(all, false)
      expect(allText).toContain("22 records, 2 turns, 0 unreadable lines")
      expect(allText.split("\n").at(-1)).toBe(
        "End of file (2 turns plus the records before the first turn shown from line 1)."
      )

      // The conversation view shows turn 0 only when it holds indexed messages (here it does not).
      const conversation = yield* explore({ path: oldFormat, limit: 1 })
      expect(conversation.turns?.map((t) => t.number)).toEqual([1])
      expect(conversation.page).toMatchObject({ shown: 1, next_line: 14 })
    })
  )

  it.effect("a file is read by the format the registry recognises; a file no format claims is refused", () =>
    Effect.gen(function* () {
      const codex = yield* explore({ path: oldFormat, view: "preview" })
      expect([codex.format, codex.agent]).toEqual(["codex", "codex"])
      const claude = NodePath.join(dir, "5f0c3a9e.jsonl")
      Fs.writeFileSync(
        claude,
        `${JSON.stringify({ sessionId: "5f0c3a9e", type: "user", message: { content: "hi" } })}\n`
      )
      const read = yield* explore({ path: claude })
      expect([read.format, read.agent]).toEqual(["claude", "claude"])
      const path = NodePath.join(dir, "notes.jsonl")
      Fs.writeFileSync(path, `${JSON.stringify({ kind: "note", text: "hi" })}\n`)
      const refused = yield* Effect.flip(explore({ path }))
      expect(refused._tag).toBe("ExploreFailure")
      expect(refused.path).toBe(path)
      expect(refused.message).toBe(
        `${path} is not a transcript blctx can read: its name and first line match no transcript format blctx knows`
      )
      expect(refused.remediation).toContain("Codex, Claude Code")
    })
  )
})

describe("listTranscripts", () => {
  it.effect("lists every registered format's sessions under its home, with the format and agent of each", () =>
    Effect.gen(function* () {
      const codexHome = NodePath.join(dir, "codex")
      const placed = NodePath.join(codexHome, "sessions", "2026", "03", "01", "rollout-2026-03-01T10-00-00-a.jsonl")
      Fs.mkdirSync(NodePath.dirname(placed), { recursive: true })
      Fs.copyFileSync(oldFormat, placed)
      const gemini = NodePath.join(
        dir,
        ".gemini",
        "tmp",
        "billing-service",
        "chats",
        "session-2026-03-01T09-00-4a0db71c.jsonl"
      )
      Fs.mkdirSync(NodePath.dirname(gemini), { recursive: true })
      Fs.copyFileSync(geminiFixture, gemini)
      Fs.utimesSync(gemini, new Date("2026-03-01T09:00:00Z"), new Date("2026-03-01T09:00:00Z"))
      Fs.utimesSync(placed, new Date("2026-03-01T10:00:00Z"), new Date("2026-03-01T10:00:00Z"))
      const listed = yield* listTranscripts(defaultTargets(resolvePaths({ home: dir, CODEX_HOME: codexHome })), 10)
      expect(listed.homes.map((h) => [h.format, h.home, h.total])).toEqual([
        ["codex", codexHome, 1],
        ["claude", NodePath.join(dir, ".claude"), 0],
        ["gemini", NodePath.join(dir, ".gemini"), 1]
      ])
      expect(listed.transcripts).toEqual([
        expect.objectContaining({
          path: placed,
          format: "codex",
          agent: "codex",
          session_id: "0199a000-0000-7000-8000-000000000001",
          cwd: "/home/dev/project"
        }),
        // Gemini CLI's header has the id; the working folder is in the session context it injects.
        expect.objectContaining({
          path: gemini,
          format: "gemini",
          agent: "gemini",
          session_id: "4a0db71c-cf50-403e-aaef-e138e941213c",
          cwd: "/home/dev/billing-service"
        })
      ])
      expect(renderList(listed)).toContain(`Codex transcripts in ${codexHome}: 1 (1 active, 0 archived)`)
      const elsewhere = yield* listTranscripts(targetsUnder(NodePath.join(dir, "nowhere")), 10)
      expect([elsewhere.total, elsewhere.transcripts]).toEqual([0, []])
    }).pipe(Effect.provide(Layer.merge(NodeSafeFsLive, NodeTranscriptFilesLive)))
  )
})

describe("listTranscripts and explore PATH agree on a session's id and cwd", () => {
  it.effect("a Claude Code file whose first records carry no cwd, or nothing at all, is listed with both", () =>
    Effect.gen(function* () {
      const project = NodePath.join(dir, ".claude", "projects", "-home-user-project")
      Fs.mkdirSync(project, { recursive: true })
      // A queue operation first (a session id, no cwd); and a summary line first (neither).
      const queued = NodePath.join(project, "11111111-1111-4111-8111-111111111111.jsonl")
      Fs.copyFileSync(NodePath.join(claudeFixtures, "plain-turn.jsonl"), queued)
      const summarized = NodePath.join(project, "33333333-3333-4333-8333-333333333333.jsonl")
      Fs.writeFileSync(
        summarized,
        `${JSON.stringify({ type: "summary", summary: "Thinking it over", leafUuid: "x" })}\n${Fs.readFileSync(NodePath.join(claudeFixtures, "thinking.jsonl"), "utf8")}`
      )
      const listed = yield* listTranscripts(
        defaultTargets(resolvePaths({ home: dir, CODEX_HOME: NodePath.join(dir, "codex") })),
        10
      )
      for (const path of [queued, summarized]) {
        const shown = yield* explore({ path })
        const row = listed.transcripts.find((t) => t.path === path)
        expect(shown.session?.cwd).toBe("/home/user/project")
        expect([row?.session_id, row?.cwd]).toEqual([shown.session?.id, shown.session?.cwd])
      }
    }).pipe(Effect.provide(Layer.merge(NodeSafeFsLive, NodeTranscriptFilesLive)))
  )
})

describe("Claude Code transcripts in explore", () => {
  it.effect("shows a Claude Code session as a conversation, its agent named, nothing injected indexed", () =>
    Effect.gen(function* () {
      const path = NodePath.join(claudeFixtures, "api-requests-and-attachments.jsonl")
      const result = yield* explore({ path })
      expect([result.format, result.agent]).toEqual(["claude", "claude"])
      const texts = (result.turns ?? []).flatMap((t) => t.messages.map((m) => m.text))
      expect(texts).toEqual(["What is the deploy command?", "Run make ship-it from the repository root."])
      const text = renderFile(result, false)
      expect(text).toContain("Claude Code 2.1.332")
      expect(text).toContain("  claude (final answer) [line 13")
      expect(text).not.toContain("blctx recall")
      const preview = yield* explore({ path, view: "preview", details: true })
      const decisions = (preview.turns ?? []).flatMap((t) => t.decisions ?? [])
      expect(decisions.filter((d) => d.record_type.startsWith("api-request")).map((d) => d.decision)).toEqual([
        "excluded",
        "excluded",
        "excluded"
      ])
      expect(decisions.find((d) => d.record_type === "attachment/hook_additional_context")?.decision).toBe(
        "context_only"
      )
      const sub = yield* explore({
        path: NodePath.join(
          claudeFixtures,
          "55555555-5555-4555-8555-555555555555/subagents/agent-a1b2c3d4e5f6a7b8.jsonl"
        )
      })
      expect(renderFile(sub, false)).toContain(
        "sidechain sub-agent, spawned by session 55555555-5555-4555-8555-555555555555"
      )
    })
  )

  it.effect("lists Claude Code sessions beside Codex ones; narrowed to one agent, only that agent's", () =>
    Effect.gen(function* () {
      const codexHome = NodePath.join(dir, "codex")
      const codex = NodePath.join(codexHome, "sessions", "2026", "03", "01", "rollout-2026-03-01T10-00-00-a.jsonl")
      Fs.mkdirSync(NodePath.dirname(codex), { recursive: true })
      Fs.copyFileSync(oldFormat, codex)
      const claude = NodePath.join(
        dir,
        ".claude",
        "projects",
        "-home-user-project",
        "88888888-8888-4888-8888-888888888888.jsonl"
      )
      Fs.mkdirSync(NodePath.dirname(claude), { recursive: true })
      Fs.copyFileSync(NodePath.join(claudeFixtures, "api-requests-and-attachments.jsonl"), claude)
      const paths = resolvePaths({ home: dir, CODEX_HOME: codexHome })
      const both = yield* listTranscripts(defaultTargets(paths), 10)
      expect(new Set(both.transcripts.map((t) => [t.format, t.agent, t.path].join(" ")))).toEqual(
        new Set([`codex codex ${codex}`, `claude claude ${claude}`])
      )
      expect(both.transcripts.find((t) => t.format === "claude")?.session_id).toBe(
        "88888888-8888-4888-8888-888888888888"
      )
      const text = renderList(both)
      expect(text).toContain(`Claude Code transcripts in ${NodePath.join(dir, ".claude")}: 1 (1 active, 0 archived)`)
      expect(text).toContain("  Claude Code  ")
      const only = yield* listTranscripts(defaultTargets(paths, [claudeFormat]), 10)
      expect(only.transcripts.map((t) => t.path)).toEqual([claude])
      expect(only.homes.map((h) => h.format)).toEqual(["claude"])
    }).pipe(Effect.provide(Layer.merge(NodeSafeFsLive, NodeTranscriptFilesLive)))
  )
})
