import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { SqlClient } from "@effect/sql"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option, ParseResult, Schema } from "effect"
import { importOnce, makeTempDir, withHistoryDb, writeTranscript } from "../importer/history-db.test-support.js"
import { expandContext } from "./context.js"
import { RESPONSE_TEXT_BUDGET, type SearchFilters, SearchHit, SearchRequest } from "./contract.js"
import { makeHistoryReadsSql } from "./history-reads-sql.js"
import { COMMON_WORD_SHARE, ftsQuery, matchingWords, rankedChunks } from "./lexical-search.js"
import { recallPrompt } from "./prompt-recall-read.js"
import { recentTurns } from "./recent.js"
import { search } from "./search.js"
import { Synonyms, synonymTable } from "./synonyms.js"

let dir: string
beforeEach(() => {
  dir = makeTempDir("blctx-search-")
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

const line = (timestamp: string, type: string, payload: unknown) => ({ timestamp, type, payload })
const session = (id: string, cwd: string, prompts: ReadonlyArray<readonly [string, string, string]>) => [
  line(prompts[0]?.[0] ?? "2026-03-01T00:00:00Z", "session_meta", { id, cwd, cli_version: "0.120.0" }),
  ...prompts.flatMap(([at, request, answer]) => [
    line(at, "event_msg", { type: "user_message", message: request }),
    line(at, "event_msg", { type: "agent_message", message: answer, phase: "final_answer" })
  ])
]

/** Two projects, two sessions, messages on both sides of a UTC day boundary. */
const seed = Effect.gen(function* () {
  yield* importOnce(
    writeTranscript(
      NodePath.join(dir, "a.jsonl"),
      session("0199d000-0000-7000-8000-00000000000a", "/home/dev/alpha", [
        ["2026-03-01T23:59:59.999Z", "How do we deploy alpha?", "We deploy alpha with a blue-green rollout."],
        [
          "2026-03-02T00:00:00.000Z",
          "What about the deploy database migration?",
          "Run the migration before the deploy."
        ]
      ])
    )
  )
  yield* importOnce(
    writeTranscript(
      NodePath.join(dir, "b.jsonl"),
      session("0199d000-0000-7000-8000-00000000000b", "/home/dev/beta", [
        ["2026-03-05T12:00:00+02:00", "Deploy beta to staging", "Beta deploy goes through the staging cluster."]
      ])
    )
  )
})

const request = (query: string, extra: Partial<Parameters<typeof SearchRequest.make>[0]> = {}) =>
  SearchRequest.make({ query, ...extra })

const lexical = (r: SearchRequest) => search(r, Option.none(), "no verified model")

/** Imports one session of `turns` ([at, request, answer]) in `cwd`, from a file named by its id. */
const seedSession = (id: string, cwd: string, turns: ReadonlyArray<readonly [string, string, string]>) =>
  importOnce(writeTranscript(NodePath.join(dir, `${id}.jsonl`), session(id, cwd, turns)))

describe("search", () => {
  it.effect("answers lexically with the full result contract and says why", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* seed
        const response = yield* lexical(request("blue-green rollout"))
        expect(response.query_mode).toBe("lexical")
        expect(response.query_mode_reason).toBe("no verified model")
        const top = response.results[0]
        expect(top?.text).toBe("We deploy alpha with a blue-green rollout.")
        expect(top?.score.kind).toBe("bm25")
        expect(top?.source_type).toBe("codex_transcript")
        expect(top?.project).toBe("/home/dev/alpha")
        expect(top?.session_id).toBe("0199d000-0000-7000-8000-00000000000a")
        expect(top?.role).toBe("assistant")
        expect(top?.chunk).toEqual({ ordinal: 0, char_start: 0, char_end: top?.text.length })
        // The cited bytes are exactly the source line, in a transcript Codex wrote.
        const source = top?.source
        if (source?.kind !== "transcript_span") return expect.fail(`a transcript span, not ${source?.kind}`)
        expect(source.agent).toBe("codex")
        expect(source.path).toBe(NodePath.join(dir, "a.jsonl"))
        const bytes = Fs.readFileSync(source.path).subarray(source.byte_start, source.byte_end)
        expect(JSON.parse(bytes.toString("utf8")).payload.message).toBe(top?.text)
        expect(source.line).toBe(3)
        // The passage: its message and its characters there, which no re-chunking changes.
        expect(top?.context_id).toMatch(new RegExp(`^m\\d+@${top?.chunk.char_start}-${top?.chunk.char_end}$`))
      })
    )
  )

  it.effect("recall is global by default; filters never leak results outside them", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* seed
        const all = yield* lexical(request("deploy", { limit: 50 }))
        expect(new Set(all.results.map((h) => h.project))).toEqual(new Set(["/home/dev/alpha", "/home/dev/beta"]))
        const alpha = yield* lexical(request("deploy", { limit: 50, filters: { project: "/home/dev/alpha" } }))
        expect(alpha.results.length).toBeGreaterThan(0)
        expect(alpha.results.every((h) => h.project === "/home/dev/alpha")).toBe(true)
        const prefixTrap = yield* lexical(request("deploy", { filters: { project: "/home/dev/alp" } }))
        expect(prefixTrap.results).toEqual([])
        const beta = yield* lexical(request("deploy", { filters: { session: "0199d000-0000-7000-8000-00000000000b" } }))
        expect(beta.results.every((h) => h.session_id === "0199d000-0000-7000-8000-00000000000b")).toBe(true)
        const day = yield* lexical(
          request("deploy", { limit: 50, filters: { since: "2026-03-01", until: "2026-03-02" } })
        )
        expect(day.results.map((h) => h.timestamp)).toEqual(["2026-03-01T23:59:59.999Z", "2026-03-01T23:59:59.999Z"])
        const next = yield* lexical(
          request("deploy", { limit: 50, filters: { since: "2026-03-02", until: "2026-03-03" } })
        )
        expect(next.results.every((h) => h.timestamp === "2026-03-02T00:00:00.000Z")).toBe(true)
        const notes = yield* lexical(request("deploy", { filters: { source_type: "authored_update" } }))
        expect(notes.results).toEqual([])
      })
    )
  )

  it.effect("an authored note ranks ahead of an identical transcript echo", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* seed
        const sql = yield* SqlClient.SqlClient
        const echo = "We deploy alpha with a blue-green rollout."
        const file = yield* sql<{ id: number }>`SELECT id FROM source_files LIMIT 1`
        const fileId = file[0]?.id ?? 0
        const note = yield* sql<{
          id: number
        }>`INSERT INTO messages (source_file_id, session_id, turn_number, role, kind, text,
            text_sha256, redactions, cwd, timestamp, line, byte_start, byte_end, source_type)
          VALUES (${fileId}, NULL, 0, 'user', 'note', ${echo}, 'x', 0, '/home/dev/alpha', '2026-01-01T00:00:00Z', 0, -1, -1, 'authored_update')
          RETURNING id`
        yield* sql`INSERT INTO chunks (message_id, ordinal, char_start, char_end, text, tokenizer)
                   VALUES (${note[0]?.id ?? 0}, 0, 0, ${echo.length}, ${echo}, 'whole-message')`
        const response = yield* lexical(request("blue-green rollout"))
        expect(response.results.slice(0, 2).map((h) => h.source_type)).toEqual(["authored_update", "codex_transcript"])
      })
    )
  )

  it.effect("a note revision and another agent's transcript are found with their own provenance", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* seed
        const sql = yield* SqlClient.SqlClient
        const fileId = (yield* sql<{ id: number }>`SELECT min(id) AS id FROM source_files`)[0]?.id ?? 0
        const store = (text: string, columns: Record<string, unknown>) =>
          Effect.gen(function* () {
            const message = yield* sql<{ id: number }>`INSERT INTO messages ${sql.insert({
              role: "user",
              kind: "note",
              text,
              text_sha256: "x",
              redactions: 0,
              cwd: "/home/dev/alpha",
              timestamp: "2026-03-03T00:00:00Z",
              ...columns
            })} RETURNING id`
            yield* sql`INSERT INTO chunks (message_id, ordinal, char_start, char_end, text, tokenizer)
                       VALUES (${message[0]?.id ?? 0}, 0, 0, ${text.length}, ${text}, 'whole-message')`
          })
        yield* store("Decision: alpha deploys on Fridays only", {
          source_type: "authored_update",
          agent: null,
          note_id: "note-7",
          note_revision: 3
        })
        yield* store("Claude said alpha deploys need a Fridays freeze", {
          source_type: "claude_transcript",
          agent: "claude",
          source_file_id: fileId,
          line: 40,
          byte_start: 4000,
          byte_end: 4100
        })

        const answer = yield* lexical(request("Fridays", { limit: 10 }))
        const note = answer.results.find((h) => h.source_type === "authored_update")
        // Revision 3 is the current one: the note has three revisions.
        expect(note?.source).toEqual({ kind: "note_revision", note_id: "note-7", revision: 3, revisions: 3 })
        expect(Schema.encodeSync(SearchHit)(note as SearchHit).source).toEqual({
          kind: "note_revision",
          note_id: "note-7",
          revision: 3,
          revisions: 3
        })
        // A transcript hit keeps the fields it always had, plus its kind and agent.
        const transcript = (yield* lexical(request("blue-green rollout"))).results[0] as SearchHit
        expect(Object.keys(Schema.encodeSync(SearchHit)(transcript).source).sort()).toEqual(
          ["agent", "byte_end", "byte_start", "kind", "line", "path"].sort()
        )

        const claude = yield* lexical(request("Fridays", { filters: { source_type: "claude_transcript" } }))
        expect(claude.results.map((h) => [h.text, h.source])).toEqual([
          [
            "Claude said alpha deploys need a Fridays freeze",
            {
              kind: "transcript_span",
              agent: "claude",
              path: NodePath.join(dir, "a.jsonl"),
              line: 40,
              byte_start: 4000,
              byte_end: 4100
            }
          ]
        ])

        // The note's context is its current revision; recent shows it as an entry of its own.
        const context = yield* expandContext({ context_id: note?.context_id ?? "", limit: 10, char_offset: 0 })
        expect(context.messages.map((m) => [m.text, m.source])).toEqual([
          [
            "Decision: alpha deploys on Fridays only",
            { kind: "note_revision", note_id: "note-7", revision: 3, revisions: 3 }
          ]
        ])
        const recent = yield* recentTurns({ sinceMs: null, untilMs: null }, null, 50, 0)
        const recentTexts = recent.turns.flatMap((t) => t.messages.map((m) => m.text))
        expect(recentTexts).toContain("Decision: alpha deploys on Fridays only")
        expect(recentTexts).toContain("Claude said alpha deploys need a Fridays freeze")
      })
    )
  )

  it.effect("source_type is an open set: a type no message has matches nothing; the filter is bounded", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* seed
        for (const source_type of ["aider_transcript", "codex", "Codex Transcript"]) {
          expect((yield* lexical(request("deploy", { filters: { source_type } }))).results).toEqual([])
        }
        expect(
          (yield* lexical(request("deploy", { filters: { source_type: "codex_transcript" } }))).results
        ).not.toEqual([])
        const oversized = Schema.decodeUnknownEither(SearchRequest)({
          query: "deploy",
          filters: { source_type: "x".repeat(65) }
        })
        if (Either.isRight(oversized)) return expect.fail("an oversized source type is refused")
        expect(ParseResult.TreeFormatter.formatErrorSync(oversized.left)).toContain("source_type")
      })
    )
  )

  it.effect("pages are stable: consecutive pages equal one long page, without overlap", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* seed
        const long = yield* lexical(request("deploy", { limit: 6 }))
        const first = yield* lexical(request("deploy", { limit: 3 }))
        const second = yield* lexical(request("deploy", { limit: 3, offset: first.next_offset ?? 0 }))
        expect([...first.results, ...second.results].map((h) => h.context_id)).toEqual(
          long.results.map((h) => h.context_id)
        )
        expect(first.next_offset).toBe(3)
      })
    )
  )

  it.effect("caps returned text at exactly 24,000 characters and flags the truncation", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        const big = `budget ${"x".repeat(30_000)}`
        yield* importOnce(
          writeTranscript(
            NodePath.join(dir, "big.jsonl"),
            session("0199d000-0000-7000-8000-00000000000c", "/w", [["2026-03-01T00:00:00Z", big, "budget answer"]])
          )
        )
        const response = yield* lexical(request("budget"))
        expect(response.truncated).toBe(true)
        expect(response.returned_chars).toBe(RESPONSE_TEXT_BUDGET)
        expect(response.results.reduce((n, h) => n + h.text.length, 0)).toBe(RESPONSE_TEXT_BUDGET)
        const cut = response.results.find((h) => h.text_truncated)
        expect(cut?.text.startsWith("budget xxx")).toBe(true)
      })
    )
  )

  it.effect("fuses lexical and vector candidates, dropping vector hits outside the filters", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* seed
        const sql = yield* SqlClient.SqlClient
        const ids = yield* sql<{
          id: number
          cwd: string
        }>`SELECT c.id, m.cwd FROM chunks c JOIN messages m ON m.id = c.message_id ORDER BY c.id`
        const beta = ids.filter((r) => r.cwd === "/home/dev/beta").map((r) => ({ id: r.id, score: 0.9 }))
        const alpha = ids.filter((r) => r.cwd === "/home/dev/alpha").map((r) => ({ id: r.id, score: 0.5 }))
        const response = yield* search(
          request("deploy", { limit: 10, filters: { project: "/home/dev/alpha" } }),
          Option.some({ hits: [...beta, ...alpha] }),
          "unused"
        )
        expect(response.query_mode).toBe("hybrid")
        expect(response.query_mode_reason).toBeNull()
        expect(response.results.length).toBeGreaterThan(0)
        expect(response.results.every((h) => h.project === "/home/dev/alpha" && h.score.kind === "fused")).toBe(true)
      })
    )
  )
})

describe("lexical search pages", () => {
  it.effect(
    "join only the chunks ranked at least as well as the page's last place, with the same order on every page, filtered or not",
    () =>
      withHistoryDb(
        dir,
        Effect.gen(function* () {
          // Many exact duplicates (equal BM25) at several timestamps, plus texts of other ranks: more
          // copies of one text than a page and its tie margin hold, filtered or not.
          const texts = [
            "deploy the daemon",
            "deploy",
            "deploy the daemon on friday",
            "the daemon restarts",
            "deploy deploy"
          ]
          for (let f = 0; f < 8; f++) {
            const prompts = Array.from({ length: 10 }, (_, i) => {
              const at = `2026-03-0${1 + (i % 3)}T10:00:0${f}.000Z`
              return [at, texts[i % texts.length] ?? "", texts[(i + f) % texts.length] ?? ""] as const
            })
            yield* importOnce(
              writeTranscript(
                NodePath.join(dir, `ties-${f}.jsonl`),
                session(`0199d000-0000-7000-8000-00000000001${f}`, "/home/dev/ties", prompts)
              )
            )
          }
          let pages = 0
          const filterSets = [
            {},
            { since: "2026-03-02T00:00:00Z" },
            { since: "2026-03-02T00:00:00Z", until: "2026-03-03T00:00:00Z" },
            { session: "0199d000-0000-7000-8000-000000000012" }
          ]
          for (const filters of filterSets) {
            for (const query of ["deploy", "daemon", "deploy daemon friday", "restarts"]) {
              const match = ftsQuery(query) ?? ""
              const all = yield* rankedChunks(match, filters, 1000, 0, "join all")
              expect(all.length).toBeGreaterThan(0)
              for (const limit of [1, 3, 7]) {
                for (let offset = 0; offset <= all.length; offset += limit) {
                  pages++
                  const page = yield* rankedChunks(match, filters, limit, offset, "page first")
                  expect(page.map((r) => r.chunk_id)).toEqual(all.slice(offset, offset + limit).map((r) => r.chunk_id))
                  page.forEach((r, i) => {
                    expect(r.rank).toBeCloseTo(all[offset + i]?.rank ?? Number.NaN, 9)
                  })
                }
              }
            }
          }
          expect(pages).toBeGreaterThan(400)
        })
      )
  )
})

describe("the words a search matches on", () => {
  it.effect("leaves out words in more than a tenth of the chunks when the query has a rarer one", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        // "the" is in every message, "deploy" in half, "narwhal" in one of twenty.
        const prompts = Array.from({ length: 10 }, (_, i) => {
          const text = i === 0 ? "the narwhal" : "the build"
          return [`2026-03-01T10:00:0${i}.000Z`, text, `the deploy answer ${i}`] as const
        })
        yield* importOnce(
          writeTranscript(
            NodePath.join(dir, "common.jsonl"),
            session("0199d000-0000-7000-8000-000000000020", "/home/dev/common", prompts)
          )
        )
        expect(COMMON_WORD_SHARE).toBe(0.1)
        expect(yield* matchingWords("the narwhal")).toEqual(["narwhal"])
        expect(yield* matchingWords("The deploy, the NARWHAL")).toEqual(["narwhal"])
        // Only common words: all of them are kept. One word: kept whatever it is.
        expect(yield* matchingWords("the deploy")).toEqual(["the", "deploy"])
        expect(yield* matchingWords("the")).toEqual(["the"])
        // A word the index never saw is no reason to drop the ones it has.
        expect(yield* matchingWords("the unknownword")).toEqual(["the", "unknownword"])
        expect(yield* matchingWords("the narwhal unknownword")).toEqual(["narwhal", "unknownword"])
        const hits = yield* lexical(request("what did the narwhal do"))
        expect(hits.results.map((r) => r.text)).toEqual(["the narwhal"])
      })
    )
  )
  it.effect("keeps common words when a filter narrows the search to a time, a project or a session", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        // March: most answers are about invoices, four about retries; April: one fix, elsewhere.
        const march = Array.from({ length: 10 }, (_, i) => {
          const answer =
            i === 4
              ? "Invoice retries are now capped at 1."
              : i < 7
                ? `Invoice report ${i} is ready for the customer.`
                : `Retries of export job ${i} stay at five.`
          return [`2026-03-01T10:0${i}:00.000Z`, `next run ${i}`, answer] as const
        })
        yield* seedSession("0199d000-0000-7000-8000-000000000021", "/home/dev/billing", march)
        yield* seedSession("0199d000-0000-7000-8000-000000000022", "/home/dev/web", [
          ["2026-04-01T10:00:00.000Z", "fix the login page", "Fixed the login page."]
        ])
        // Over the whole index "invoice" and "retries" are common and "fix" is rare: they go.
        expect(yield* matchingWords("fix invoice retries")).toEqual(["fix"])
        const whole = yield* lexical(request("how did we fix the invoice retries"))
        expect(whole.results.map((h) => h.text).sort()).toEqual(["Fixed the login page.", "fix the login page"])
        const narrowed = [
          { since: "2026-03-01T00:00:00Z", until: "2026-03-02T00:00:00Z" },
          { project: "/home/dev/billing" },
          { session: "0199d000-0000-7000-8000-000000000021" }
        ]
        for (const filters of narrowed) {
          const within = yield* lexical(request("how did we fix the invoice retries", { filters }))
          expect(within.results[0]?.text).toBe("Invoice retries are now capped at 1.")
        }
      })
    )
  )
})

describe("a question bounded in time that names a project", () => {
  it.effect("lists that project's turns of that time first, final answers first, then word matches", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        // The billing service's week never says its name; another project's mentions billing.
        yield* seedSession("0199d000-0000-7000-8000-000000000041", "/home/dev/billing-service", [
          [
            "2026-03-02T10:00:00.000Z",
            "Finance wants invoices as PDF attachments",
            "Invoice PDFs render from the template."
          ]
        ])
        yield* seedSession("0199d000-0000-7000-8000-000000000042", "/home/dev/infra", [
          ["2026-03-03T10:00:00.000Z", "Which alerts page at night?", "Only a failed billing job pages at night."]
        ])
        yield* seedSession("0199d000-0000-7000-8000-000000000043", "/home/dev/billing-service", [
          ["2026-02-01T10:00:00.000Z", "Stripe webhooks", "The billing service retries webhooks twice."]
        ])
        const week = { since: "2026-03-01T00:00:00Z", until: "2026-03-08T00:00:00Z" }
        const asked = (query: string, filters: SearchFilters, page = {}) =>
          lexical(request(query, { filters, ...page }))
        const found = yield* asked("what did we do on the billing service", week)
        expect(found.project_named).toBe("/home/dev/billing-service")
        expect((yield* asked("what happened in billing", week)).project_named).toBe("/home/dev/billing-service")
        expect(found.results.map((h) => h.text)).toEqual([
          "Invoice PDFs render from the template.",
          "Finance wants invoices as PDF attachments",
          "Only a failed billing job pages at night."
        ])
        // Pages of one continue the same order; ranks stay in it.
        const pages = []
        for (const offset of [0, 1, 2])
          pages.push(...(yield* asked("billing service", week, { limit: 1, offset })).results)
        expect(pages.map((h) => h.text)).toEqual(found.results.map((h) => h.text))
        const ranks = found.results.map((h) => h.score.value)
        expect([...ranks].sort((a, b) => a - b)).toEqual(ranks)
        // Not bounded in time, or a word beyond the name: the words are searched as words.
        const always = yield* asked("what did we do on the billing service", {})
        expect(always.project_named).toBeUndefined()
        expect(always.results.map((h) => h.text)).not.toContain("Invoice PDFs render from the template.")
        const topic = yield* asked("billing service alerts", week)
        expect(topic.project_named).toBeUndefined()
        expect(topic.results[0]?.text).toBe("Only a failed billing job pages at night.")
        // A second project of that name: no guess.
        yield* seedSession("0199d000-0000-7000-8000-000000000044", "/srv/billing-service", [
          ["2026-03-04T10:00:00.000Z", "Rotate the keys", "Keys rotated."]
        ])
        const twice = yield* asked("what did we do on the billing service", week)
        expect(twice.project_named).toBeUndefined()
        expect(twice.results.map((h) => h.text)).toEqual(["Only a failed billing job pages at night."])
      })
    )
  )
  it.effect("is searched as its words by prompt recall, which keeps only hits that clear its floor", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        // More unnamed turns of the billing service that week than recall fetches, and one
        // mention of billing elsewhere: listed first, they would take every place it fetches.
        const busy = Array.from({ length: 12 }, (_, i) => {
          const at = `2026-03-02T10:${String(i).padStart(2, "0")}:00.000Z`
          return [at, `next step ${i}`, `Step ${i} of the PDF work is done.`] as const
        })
        yield* seedSession("0199d000-0000-7000-8000-000000000045", "/home/dev/billing-service", busy)
        yield* seedSession("0199d000-0000-7000-8000-000000000046", "/home/dev/infra", [
          ["2026-03-03T10:00:00.000Z", "Which alerts page at night?", "Only a failed billing job pages at night."]
        ])
        const week = { since: "2026-03-01T00:00:00Z", until: "2026-03-08T00:00:00Z" }
        const prompt = "what did we do on the billing service"
        const searched = yield* lexical(request(prompt, { filters: week, limit: 3 }))
        expect(searched.project_named).toBe("/home/dev/billing-service")
        const recalled = yield* recallPrompt({ prompt, limit: 3, floor: 0.1, ...week }, Option.none())
        expect(recalled.hits.map((h) => h.text)).toEqual(["Only a failed billing job pages at night."])
      })
    )
  )
})

describe("searching with synonyms", () => {
  const thesaurus = synonymTable("bill measure account invoice\nclient customer\n")
  const withThesaurus = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Synonyms, thesaurus)
  const seedTurns = (id: string, turns: ReadonlyArray<readonly [string, string]>) =>
    importOnce(
      writeTranscript(
        NodePath.join(dir, `${id}.jsonl`),
        session(
          id,
          "/home/dev/billing",
          turns.map(([ask, answer], i) => [`2026-03-01T10:${String(i).padStart(2, "0")}:00.000Z`, ask, answer] as const)
        )
      )
    )

  it.effect("a question in other words finds its turn through the thesaurus, and only with it", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* seedTurns("0199d000-0000-7000-8000-000000000031", [
          ["Make the accountants a PDF of each invoice", "Invoices render to PDF with pdfkit."],
          ["Retry the nightly export", "The export retries three times."]
        ])
        const own = yield* lexical(request("printable bills"))
        expect(own.results).toEqual([])
        expect(own.synonyms_searched).toBeUndefined()
        const widened = yield* withThesaurus(lexical(request("printable bills")))
        expect(widened.results.map((h) => h.text)).toEqual([
          "Invoices render to PDF with pdfkit.",
          "Make the accountants a PDF of each invoice"
        ])
        // The answer names what it searched besides the question's words: only what the index
        // holds ("measure" is nowhere; "account" is, as the stem of "accountants").
        expect(widened.synonyms_searched).toEqual(["account", "invoice"])
        // The reads the query worker serves widen a search with the thesaurus they are given.
        const reads = yield* makeHistoryReadsSql({
          database: "context.db",
          vectors: Either.left("no vectors"),
          synonyms: thesaurus
        })
        const answer = yield* reads.search({
          request: request("printable bills"),
          vectors: null,
          lexical_reason: "none"
        })
        expect(answer.results.map((h) => h.text)).toEqual(widened.results.map((h) => h.text))
        expect(answer.synonyms_searched).toEqual(["account", "invoice"])
      })
    )
  )

  it.effect("the question's own words rank above its synonyms; a common synonym is not searched", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* seedTurns("0199d000-0000-7000-8000-000000000032", [
          ["Print the bill run summary", "The bill run summary prints after the export."],
          ["Make the accountants a PDF of each invoice", "Invoices render to PDF with pdfkit."],
          ...Array.from({ length: 6 }, (_, i) => [`Check account ${i}`, `The account ${i} is fine.`] as const),
          ...Array.from({ length: 20 }, (_, i) => [`Deploy step ${i}`, `Step ${i} deployed.`] as const)
        ])
        const hits = (yield* withThesaurus(lexical(request("bill summary")))).results.map((h) => h.text)
        expect(hits[0]).toBe("The bill run summary prints after the export.")
        // Both requests are found; the one in the question's own words first.
        const own = hits.indexOf("Print the bill run summary")
        const other = hits.indexOf("Make the accountants a PDF of each invoice")
        expect(own).toBeGreaterThan(0)
        expect(other).toBeGreaterThan(own)
        // "account" is in more than a tenth of the chunks: it would only add turns about something else.
        expect(hits.some((t) => t.includes("account "))).toBe(false)
        expect((yield* withThesaurus(lexical(request("bill summary")))).synonyms_searched).toEqual(["invoice"])
      })
    )
  )
})
