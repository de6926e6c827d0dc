import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Option } from "effect"
import { NodeSafeFsLive } from "../../../layers/node-safe-fs.js"
import { NodeTranscriptFilesLive } from "../../../layers/node-transcript-files.js"
import { KNOWN_SOURCE_TYPES, SOURCE_NAME_PATTERN } from "../../history/source-type.js"
import { resolvePaths } from "../../paths/paths.js"
import { classifyTranscript } from "../classify.js"
import { defaultTargets, describeTargets, discoverTranscripts, targetsUnder } from "../discovery.js"
import { readAllRecords } from "../reader.js"
import { TranscriptFiles } from "../transcript-files.js"
import { codexFormat } from "./codex-format.js"
import { formatById, formatFor, formatOfHandle, PROBE_BYTES, TRANSCRIPT_FORMATS } from "./registry.js"
import type { TranscriptFormat } from "./transcript-format.js"
import { walkSessionFolders } from "./walk-folders.js"

const fixtures = NodePath.resolve(import.meta.dirname, "..", "..", "..", "fixtures", "codex")
const fixture = NodePath.join(fixtures, "old-format-no-turn-ids.jsonl")
const headOf = (path: string) => Fs.readFileSync(path).subarray(0, PROBE_BYTES)

/** A Claude Code line: what the Claude Code format claims and Codex must not. */
const CLAUDE_LINE = JSON.stringify({
  parentUuid: null,
  isSidechain: false,
  cwd: "/home/dev/project",
  sessionId: "5f0c3a9e-0000-4000-8000-000000000001",
  type: "user",
  message: { role: "user", content: "hello" }
})

/** A stand-in for a second agent: one more entry is all a new format needs. */
const otherFormat: TranscriptFormat = {
  ...codexFormat,
  id: "other",
  label: "Other",
  agent: "other",
  sourceType: "other_transcript",
  expects: "Other session files have a sessionId on their first line",
  home: (paths) => NodePath.join(paths.home, ".other"),
  homeHint: "~/.other",
  sessionFolders: (home) => [{ path: NodePath.join(home, "projects"), archived: false }],
  detect: ({ head }) => (typeof head === "string" ? head : Buffer.from(head).toString("utf8")).includes('"sessionId"'),
  discover: (home) => walkSessionFolders(otherFormat.sessionFolders(home), { suffix: ".jsonl" })
}

let dir: string
beforeEach(() => {
  dir = Fs.realpathSync(Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-formats-")))
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

describe("the transcript format registry", () => {
  it("lists formats with unique ids whose source types and agents are well formed", () => {
    expect(TRANSCRIPT_FORMATS.map((f) => f.id)).toEqual(["codex", "claude", "gemini"])
    expect(new Set(TRANSCRIPT_FORMATS.map((f) => f.id)).size).toBe(TRANSCRIPT_FORMATS.length)
    for (const format of TRANSCRIPT_FORMATS) {
      expect(KNOWN_SOURCE_TYPES).toContain(format.sourceType)
      expect(format.agent).toMatch(SOURCE_NAME_PATTERN)
    }
    expect(Option.map(formatById("codex"), (f) => [f.agent, f.sourceType])).toEqual(
      Option.some(["codex", "codex_transcript"])
    )
    expect(Option.map(formatById("claude"), (f) => [f.agent, f.sourceType])).toEqual(
      Option.some(["claude", "claude_transcript"])
    )
    expect(formatById("other")).toEqual(Option.none())
  })

  it("detects Codex by its first record, whatever the file is called, or by its rollout-*.jsonl name", () => {
    for (const name of Fs.readdirSync(fixtures).filter((n) => n.endsWith(".jsonl"))) {
      const path = NodePath.join(fixtures, name)
      expect(Either.map(formatFor(path, headOf(path)), (f) => f.id)).toEqual(Either.right("codex"))
    }
    // A line without a timestamp, as tests and fragments write them; leading blank lines are skipped.
    const bare = '\n\n{"type":"event_msg","payload":{"type":"user_message","message":"hi"}}\n'
    expect(Either.isRight(formatFor("/x/notes.jsonl", bare))).toBe(true)
    // Newer releases add envelope fields (`ordinal`) before `type`.
    const ordinal = '{"timestamp":"2026-03-01T10:00:00.000Z","ordinal":7,"type":"response_item","payload":{}}\n'
    expect(Either.isRight(formatFor("/x/newer.jsonl", ordinal))).toBe(true)
    // A first line far longer than the probe (base instructions): the envelope's start is enough.
    const huge = `{"timestamp":"2026-03-01T10:00:00.000Z","type":"session_meta","payload":{"instructions":"${"x".repeat(PROBE_BYTES)}`
    expect(Either.isRight(formatFor("/x/big.jsonl", Buffer.from(huge).subarray(0, PROBE_BYTES)))).toBe(true)
    // Codex names its files rollout-*.jsonl: such a file is Codex's even before its first line is written.
    expect(Either.isRight(formatFor("/x/sessions/rollout-2026-03-01T10-00-00-a.jsonl", ""))).toBe(true)
    expect(Either.isRight(formatFor("/x/rollout-huge.jsonl", new Uint8Array(PROBE_BYTES)))).toBe(true)
  })

  it("refuses a file no format claims, saying why and what it reads", () => {
    const claude = formatFor("/home/dev/.claude/projects/p/5f0c3a9e.jsonl", `${CLAUDE_LINE}\n`)
    expect(Either.map(claude, (f) => f.id)).toEqual(Either.right("claude"))
    const foreign = formatFor("/home/dev/notes/5f0c3a9e.jsonl", '{"secretValue":"kept out","kind":"note"}\n')
    if (Either.isRight(foreign)) return expect.fail("a line of no known format is nobody's")
    expect(foreign.left._tag).toBe("UnknownTranscriptFormat")
    expect(foreign.left.path).toBe("/home/dev/notes/5f0c3a9e.jsonl")
    expect(foreign.left.message).toBe(
      "/home/dev/notes/5f0c3a9e.jsonl is not a transcript blctx can read: its name and first line match no transcript format blctx knows"
    )
    expect(foreign.left.remediation).toContain(
      "Give a session file of a supported agent (Codex, Claude Code, Gemini CLI)."
    )
    expect(foreign.left.remediation).toContain("rollout-*.jsonl")
    expect(foreign.left.remediation).toContain("<session id>.jsonl")
    // Its content is never quoted back.
    expect(foreign.left.message).not.toContain("secretValue")

    const empty = formatFor("/x/empty.jsonl", new Uint8Array(0))
    expect(Either.isLeft(empty) && empty.left.message).toBe(
      "/x/empty.jsonl is not a transcript blctx can read: it is empty"
    )
    for (const head of [
      Buffer.from([0xff, 0xfe, 0x00, 0x01]),
      '{"type":"note","summary":"x"}\n',
      '["type","session_meta"]\n',
      '{"payload":{"type":"session_meta"}}\n',
      '{"ordinal":1,"type":"user","message":{"type":"event_msg"}}\n'
    ]) {
      expect(Either.isLeft(formatFor("/x/t.jsonl", head))).toBe(true)
    }
  })

  it("asks formats in order, so one more entry claims its own files", () => {
    const formats = [codexFormat, otherFormat]
    expect(Either.map(formatFor("/x/a.jsonl", `${CLAUDE_LINE}\n`, formats), (f) => f.id)).toEqual(Either.right("other"))
    expect(Either.map(formatFor(fixture, headOf(fixture), formats), (f) => f.id)).toEqual(Either.right("codex"))
  })

  it.effect("reads the probe through an open handle; its classifier is the shared Codex classifier", () =>
    Effect.gen(function* () {
      const files = yield* TranscriptFiles
      const handle = yield* files.open(fixture)
      const format = yield* formatOfHandle(handle)
      expect(format.id).toBe("codex")
      const claude = yield* files.open(write("odd.jsonl", `${CLAUDE_LINE}\n`))
      expect((yield* formatOfHandle(claude)).id).toBe("claude")
      const odd = yield* files.open(write("odder.jsonl", '{"kind":"note"}\n'))
      const refused = yield* Effect.flip(formatOfHandle(odd))
      expect(refused._tag).toBe("UnknownTranscriptFormat")
      // An empty file: Codex's by its name, nobody's otherwise.
      expect((yield* formatOfHandle(yield* files.open(write("rollout-new.jsonl", "")))).id).toBe("codex")
      const empty = yield* Effect.flip(formatOfHandle(yield* files.open(write("empty.jsonl", ""))))
      expect(empty.message).toContain("it is empty")

      const { records } = yield* readAllRecords(fixture)
      const classifier = format.classifier()
      for (const record of records) classifier.push(record)
      expect(classifier.finish()).toEqual(classifyTranscript(records))
      const first = records[0]
      if (first === undefined) return expect.fail("the fixture has records")
      expect(format.header(first)).toEqual({
        session_id: "0199a000-0000-7000-8000-000000000001",
        cwd: "/home/dev/project"
      })
      expect(format.header(records[1] ?? first)).toEqual({ session_id: null, cwd: null })
    }).pipe(Effect.scoped, Effect.provide(NodeTranscriptFilesLive))
  )
})

describe("discovery through the registry", () => {
  const codexHome = () => NodePath.join(dir, "codex")
  const setup = () => {
    const newest = write("codex/sessions/2026/03/10/rollout-b.jsonl", "{}\n", 1)
    const older = write("codex/sessions/2026/03/09/rollout-a.jsonl", "{}\n", 60)
    const archived = write("codex/archived_sessions/rollout-c.jsonl", "{}\n", 30)
    write("codex/sessions/2026/03/01/rollout-old.jsonl.zst", "zst", 900)
    write("codex/sessions/2026/03/01/notes.txt", "x", 1)
    Fs.symlinkSync(newest, NodePath.join(codexHome(), "sessions", "linked.jsonl"))
    return { newest, older, archived }
  }

  it.effect("Codex finds sessions and archived sessions under its home, following no links", () =>
    Effect.gen(function* () {
      const { newest, older, archived } = setup()
      const paths = resolvePaths({ home: dir, CODEX_HOME: codexHome() })
      expect(defaultTargets(paths).map((t) => [t.format.id, t.home])).toEqual([
        ["codex", codexHome()],
        ["claude", NodePath.join(dir, ".claude")],
        ["gemini", NodePath.join(dir, ".gemini")]
      ])
      const targets = defaultTargets(paths, [codexFormat])
      expect(describeTargets(targets)).toBe(`${codexHome()}/sessions and ${codexHome()}/archived_sessions`)
      const found = yield* discoverTranscripts(targets)
      expect(found.files.map((f) => [f.path, f.format, f.archived])).toEqual([
        [newest, "codex", false],
        [archived, "codex", true],
        [older, "codex", false]
      ])
      expect([found.activeCount, found.archivedCount, found.compressed.length, found.skippedLinks]).toEqual([
        2, 1, 1, 1
      ])
      expect(found.homes).toEqual([
        {
          format: "codex",
          agent: "codex",
          label: "Codex",
          home: codexHome(),
          folders: [`${codexHome()}/sessions`, `${codexHome()}/archived_sessions`],
          total: 3,
          active: 2,
          archived: 1
        }
      ])
      // --root names a home directly; a missing one holds nothing.
      expect((yield* discoverTranscripts(targetsUnder(codexHome(), [codexFormat]))).files.length).toBe(3)
      expect((yield* discoverTranscripts(targetsUnder(NodePath.join(dir, "nowhere")))).files).toEqual([])
    }).pipe(Effect.provide(Layer.merge(NodeSafeFsLive, NodeTranscriptFilesLive)))
  )

  it.effect("every format looks in its own folders; the files are merged newest first, each listed once", () =>
    Effect.gen(function* () {
      const { newest } = setup()
      const theirs = write(".other/projects/p/5f0c3a9e.jsonl", `${CLAUDE_LINE}\n`, 10)
      const paths = resolvePaths({ home: dir, CODEX_HOME: codexHome() })
      const found = yield* discoverTranscripts(defaultTargets(paths, [codexFormat, otherFormat]))
      expect(found.files.slice(0, 2).map((f) => [f.path, f.format])).toEqual([
        [newest, "codex"],
        [theirs, "other"]
      ])
      expect(found.homes.map((h) => [h.format, h.total])).toEqual([
        ["codex", 3],
        ["other", 1]
      ])
      // The same folder seen by two targets: its files count once, for the first.
      const twice = yield* discoverTranscripts([
        { format: codexFormat, home: codexHome() },
        { format: codexFormat, home: codexHome() }
      ])
      expect(twice.files.length).toBe(3)
      expect(twice.homes.map((h) => h.total)).toEqual([3, 0])
    }).pipe(Effect.provide(NodeSafeFsLive))
  )
})
