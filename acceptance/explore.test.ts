import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { type IsolatedHome, makeIsolatedHome, parseJson } from "./support/isolated-home.js"

const fixtures = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "codex")

let home: IsolatedHome
beforeEach(() => {
  home = makeIsolatedHome()
})
afterEach(() => home.dispose())

/** Puts a fixture into the isolated CODEX_HOME as a rollout file with a chosen mtime. */
const place = (fixture: string, relative: string, mtime: Date) => {
  const target = NodePath.join(home.codexHome, relative)
  Fs.mkdirSync(NodePath.dirname(target), { recursive: true })
  Fs.copyFileSync(NodePath.join(fixtures, fixture), target)
  Fs.utimesSync(target, mtime, mtime)
  return target
}

const listing = (dir: string): Array<string> =>
  Fs.existsSync(dir)
    ? Fs.readdirSync(dir, { recursive: true, encoding: "utf8" })
        .map((p) => p)
        .sort()
    : []

/** C0 (except tab and newline), DEL and C1 characters present in `text`. */
const controlCharacters = (text: string) =>
  [...text].filter((ch) => {
    const code = ch.charCodeAt(0)
    return (code < 0x20 && code !== 0x09 && code !== 0x0a) || (code >= 0x7f && code <= 0x9f)
  })

interface Position {
  line: number
  byte_start: number
  byte_end: number
}
interface PreviewJson {
  captured_size: number
  totals: { records: number; parse_errors: number; by_decision: Record<string, number> }
  page: { next_line: number | null; shown: number }
  turns: Array<{
    number: number
    flags: Array<string>
    messages: Array<{ kind: string; role: string; text: string; source: Position; duplicates: Array<Position> }>
    decisions?: Array<Position & { decision: string; reason: string }>
  }>
}

describe("blctx explore (list)", () => {
  it("lists the newest transcripts from active and archived sessions, reports compressed ones, changes nothing", async () => {
    const old = place(
      "old-format-no-turn-ids.jsonl",
      "sessions/2026/03/01/rollout-2026-03-01T10-00-00-a.jsonl",
      new Date("2026-03-01T10:00:00Z")
    )
    const newest = place(
      "new-format-turn-ids.jsonl",
      "sessions/2026/03/02/rollout-2026-03-02T10-00-00-b.jsonl",
      new Date("2026-03-02T10:00:00Z")
    )
    const archived = place(
      "fork.jsonl",
      "archived_sessions/rollout-2026-02-01T10-00-00-c.jsonl",
      new Date("2026-03-01T12:00:00Z")
    )
    Fs.writeFileSync(NodePath.join(home.codexHome, "sessions", "2026", "03", "01", "rollout-x.jsonl.zst"), "zst")
    Fs.symlinkSync(old, NodePath.join(home.codexHome, "sessions", "link.jsonl"))
    const before = listing(home.home)

    const result = await home.blctx(["explore", "--json"])
    expect(result.code).toBe(0)
    const json = parseJson<{
      total: number
      active: number
      archived: number
      compressed: { count: number; paths: Array<string> }
      skipped_links: number
      transcripts: Array<{
        path: string
        size: number
        archived: boolean
        session_id: string | null
        cwd: string | null
      }>
    }>(result)
    expect(json.total).toBe(3)
    expect([json.active, json.archived, json.compressed.count, json.skipped_links]).toEqual([2, 1, 1, 1])
    expect(json.transcripts.map((t) => t.path)).toEqual([newest, archived, old])
    expect(json.transcripts[0]).toMatchObject({
      size: Fs.statSync(newest).size,
      archived: false,
      session_id: "0199b000-0000-7000-8000-000000000002",
      cwd: "/home/dev/project"
    })
    expect(listing(home.home)).toEqual(before)

    const limited = await home.blctx(["explore", "--limit", "1", "--no-color"])
    expect(limited.code).toBe(0)
    expect(limited.stdout).toContain(newest)
    expect(limited.stdout).not.toContain(old)
    expect(limited.stdout).toContain("Showing the newest 1 of 3")
  })

  it("--root lists another Codex home; a missing one lists nothing", async () => {
    const result = await home.blctx(["explore", "--root", NodePath.join(home.home, "nowhere"), "--json"])
    expect(result.code).toBe(0)
    expect(parseJson<{ total: number }>(result).total).toBe(0)
  })
})

describe("blctx explore PATH", () => {
  it("preview --json labels every record, with byte-exact positions of the proposed messages", async () => {
    const path = NodePath.join(fixtures, "old-format-no-turn-ids.jsonl")
    const result = await home.blctx(["explore", path, "--view", "preview", "--details", "--json"])
    expect(result.code).toBe(0)
    const json = parseJson<PreviewJson>(result)
    expect(json.captured_size).toBe(Fs.statSync(path).size)
    expect(json.totals.records).toBe(22)
    const decisions = json.turns.flatMap((t) => t.decisions ?? [])
    expect(decisions.map((d) => d.line)).toEqual(Array.from({ length: 22 }, (_, i) => i + 1))
    const bytes = Fs.readFileSync(path)
    const lines = bytes.toString("utf8").split("\n")
    for (const m of json.turns.flatMap((t) => t.messages)) {
      expect(bytes.subarray(m.source.byte_start, m.source.byte_end).toString("utf8")).toBe(lines[m.source.line - 1])
      expect(lines[m.source.line - 1]).toContain(m.text)
    }
    expect(json.turns.map((t) => t.messages.map((m) => m.kind))).toEqual([
      [],
      ["request", "final_answer"],
      ["request", "commentary", "final_answer"]
    ])
    expect(json.turns[1]?.messages[0]?.duplicates.map((d) => d.line)).toEqual([4])
  })

  it("--limit counts complete turns and the next-line hint continues where the page stopped", async () => {
    const path = NodePath.join(fixtures, "old-format-no-turn-ids.jsonl")
    const first = parseJson<PreviewJson>(await home.blctx(["explore", path, "--limit", "1", "--json"]))
    expect(first.turns.map((t) => t.number)).toEqual([1])
    expect(first.page.next_line).toBe(14)
    expect(first.totals.records).toBe(22)
    const second = parseJson<PreviewJson>(
      await home.blctx(["explore", path, "--limit", "1", "--start-line", "14", "--json"])
    )
    expect(second.turns.map((t) => t.number)).toEqual([2])
    expect(second.page.next_line).toBeNull()
    expect(second.totals.records).toBe(22)

    const raw = parseJson<{ records: Array<Position & { value?: unknown }>; page: { next_line: number } }>(
      await home.blctx(["explore", path, "--view", "raw", "--start-line", "5", "--limit", "3", "--json"])
    )
    expect(raw.records.map((r) => r.line)).toEqual([5, 6, 7])
    expect(raw.page.next_line).toBe(8)
    expect(raw.records[0]?.value).toMatchObject({ type: "turn_context" })
  })

  it("messages shows injected context as candidates, labelled, not as approved data", async () => {
    const path = NodePath.join(fixtures, "injected-agents-md.jsonl")
    const result = await home.blctx(["explore", path, "--view", "messages", "--json"])
    expect(result.code).toBe(0)
    const json = parseJson<{ note: string; candidates: Array<{ line: number; decision: string; text: string }> }>(
      result
    )
    expect(json.note).toContain("not approved import data")
    expect(json.candidates.find((c) => c.line === 3)).toMatchObject({ decision: "context_only" })
    expect(json.candidates.find((c) => c.line === 3)?.text).toContain("# AGENTS.md instructions for")
    const text = await home.blctx(["explore", path, "--view", "messages", "--no-color"])
    expect(text.stdout).toContain("candidate -> context_only")
  })

  it("never writes a transcript's control characters to the terminal, in text or JSON", async () => {
    const evil = "red \u001b[31mALERT\u001b[0m bell \u0007 csi \u009b2J del \u007f"
    const file = NodePath.join(home.home, "evil.jsonl")
    const lines = [
      { type: "event_msg", payload: { type: "user_message", message: evil } },
      { type: "event_msg", payload: { type: "agent_message", message: evil } }
    ]
    Fs.writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`)
    for (const view of ["preview", "messages", "raw"]) {
      for (const flags of [["--json"], ["--no-color", "--details"]]) {
        const result = await home.blctx(["explore", file, "--view", view, ...flags])
        expect(result.code).toBe(0)
        expect(controlCharacters(result.stdout), `${view} ${flags.join(" ")}`).toEqual([])
      }
    }
    const json = parseJson<PreviewJson>(await home.blctx(["explore", file, "--json"]))
    expect(json.turns[0]?.messages[0]?.text).toBe(evil)
  })

  it("an unreadable path fails with exit 1 and a remediation; bad flags are usage errors (exit 2)", async () => {
    const missing = NodePath.join(home.home, "missing.jsonl")
    const result = await home.blctx(["explore", missing, "--json"])
    expect(result.code).toBe(1)
    const json = parseJson<{ error: { path: string; remediation: string }; exit_code: number }>(result)
    expect(json.error.path).toBe(missing)
    expect(json.error.remediation).toContain("does not exist")
    const zst = NodePath.join(home.home, "rollout-old.jsonl.zst")
    Fs.writeFileSync(zst, Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0, 0]))
    const compressed = await home.blctx(["explore", zst])
    expect(compressed.code).toBe(1)
    expect(compressed.stderr).toContain("compressed (zstd)")
    expect((await home.blctx(["explore", "--view", "raw"])).code).toBe(2)
    expect((await home.blctx(["explore", missing, "--limit", "0"])).code).toBe(2)
  })
})

describe("blctx explore on the reference transcripts (opt-in: runs only when BLCTX_REFERENCE_TRANSCRIPTS is set)", () => {
  const root = process.env.BLCTX_REFERENCE_TRANSCRIPTS
  const names = ["real-interactive-0.66.jsonl", "review-parent-0.77.jsonl", "review-subagent-0.77.jsonl"]
  it.skipIf(!process.env.BLCTX_REFERENCE_TRANSCRIPTS)(
    "preview --json exits 0, labels every record, finds requests and answers, indexes no injected context",
    async () => {
      for (const name of names) {
        const path = NodePath.join(root ?? "", "codex", name)
        const result = await home.blctx([
          "explore",
          path,
          "--view",
          "preview",
          "--details",
          "--limit",
          "1000",
          "--json"
        ])
        expect(result.code, name).toBe(0)
        const json = parseJson<PreviewJson>(result)
        const lines = Fs.readFileSync(path, "utf8")
          .split("\n")
          .filter((l) => l.trim() !== "").length
        const decisions = json.turns.flatMap((t) => t.decisions ?? [])
        expect(decisions, name).toHaveLength(lines)
        expect(
          decisions.every((d) => d.decision !== "" && d.reason !== ""),
          name
        ).toBe(true)
        const messages = json.turns.flatMap((t) => t.messages)
        expect(
          messages.some((m) => m.kind === "request"),
          name
        ).toBe(true)
        for (const m of messages) expect(m.text.trimStart().startsWith("<"), name).toBe(false)
        if (name === "real-interactive-0.66.jsonl") {
          expect(messages.map((m) => m.kind)).toEqual(["request", "final_answer", "request", "final_answer"])
          expect(messages[0]?.text).toBe(
            "add myapp directory and create myapp/hoge.py which shows result of print(1+1)."
          )
        }
      }
    }
  )
})
