import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option, Schema } from "effect"
import { importOnce, makeTempDir, withHistoryDb, writeTranscript } from "../importer/history-db.test-support.js"
import { MAX_REPHRASING_CHARS, MAX_REPHRASINGS, SearchRequest } from "./contract.js"
import { search, wordingWeights } from "./search.js"

let dir: string
beforeEach(() => {
  dir = makeTempDir("blctx-rephrasings-")
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

/** A Codex session in `cwd`: each turn a person's request and the agent's final answer, a minute apart. */
const seedSession = (id: string, cwd: string, turns: ReadonlyArray<readonly [string, string]>) => {
  const at = (i: number) => `2026-03-02T10:${String(i).padStart(2, "0")}:00.000Z`
  const event = (i: number, payload: unknown) => ({ timestamp: at(i), type: "event_msg", payload })
  return importOnce(
    writeTranscript(NodePath.join(dir, `${id}.jsonl`), [
      { timestamp: at(0), type: "session_meta", payload: { id, cwd, cli_version: "0.120.0" } },
      ...turns.flatMap(([ask, answer], i) => [
        event(i, { type: "user_message", message: ask }),
        event(i, { type: "agent_message", message: answer, phase: "final_answer" })
      ])
    ])
  )
}

const ROLLBACK = "Rollback is make rollback, which redeploys the previous task definition."
const DEPLOYS = "0199d000-0000-7000-8000-000000000041"
const RELEASES = "0199d000-0000-7000-8000-000000000042"

/** A deploy history whose rollback turn shares no word with "how do I undo a release that went wrong". */
const seed = Effect.gen(function* () {
  yield* seedSession(DEPLOYS, "/home/dev/infra", [
    ["How do we get back to the last good version?", ROLLBACK],
    ["Why are deploys slow?", "Lowered the deregistration delay on the target groups to 30 seconds."]
  ])
  yield* seedSession(RELEASES, "/home/dev/web", [
    ["Write the release notes", "The release notes for 2.3 list the new export button."],
    ["Did the release go out?", "The release went out at noon; nothing went wrong."]
  ])
})

const ask = (query: string, extra: Partial<Parameters<typeof SearchRequest.make>[0]> = {}) =>
  search(SearchRequest.make({ query, ...extra }), Option.none(), "no verified model")

const texts = (answer: { readonly results: ReadonlyArray<{ readonly text: string }> }) =>
  answer.results.map((h) => h.text)

describe("searching with the agent's rephrasings", () => {
  it.effect("a turn the question's words miss is found through a rephrasing, and only with it", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* seed
        const own = yield* ask("how do I undo a release that went wrong")
        expect(texts(own)).not.toContain(ROLLBACK)
        const rephrased = yield* ask("how do I undo a release that went wrong", {
          rephrasings: ["rollback deployment", "redeploy previous version"]
        })
        expect(texts(rephrased)).toContain(ROLLBACK)
        // Words only still, merged from several lists: the score says it was fused.
        expect(rephrased.query_mode).toBe("lexical")
        expect(rephrased.results.every((h) => h.score.kind === "fused")).toBe(true)
        expect(rephrased.query).toBe("how do I undo a release that went wrong")
      })
    )
  )

  it.effect("the question's own exact match stays first whatever the rephrasings find", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* seed
        // A turn every rephrasing finds, that shares a word with the question as well.
        const rollbackSwitch = "The deploy page has a rollback switch now, beside the release export."
        yield* seedSession("0199d000-0000-7000-8000-000000000043", "/home/dev/infra", [
          ["Add a rollback switch to the deploy page", rollbackSwitch]
        ])
        const rephrasings = ["rollback switch deploy page", "deploy page rollback switch", "rollback switch"]
        const merged = yield* ask("release notes export", { rephrasings })
        expect(texts(merged)[0]).toBe("The release notes for 2.3 list the new export button.")
        expect(texts(merged)[1]).toBe(rollbackSwitch)
      })
    )
  )

  it.effect("rephrasings are searched within the request's filters", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* seed
        const answer = yield* ask("how do I undo a release that went wrong", {
          rephrasings: ["rollback deployment"],
          filters: { project: "/home/dev/web" },
          limit: 50
        })
        expect(answer.results.length).toBeGreaterThan(0)
        expect(answer.results.every((h) => h.project === "/home/dev/web")).toBe(true)
      })
    )
  )

  it.effect("a rephrasing is words, never search syntax: FTS operators and quotes are searched as text", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* seed
        const answer = yield* ask("undo a release", {
          rephrasings: ['rollback" OR NEAR(', "*) AND -- NOT ^", '""']
        })
        expect(texts(answer)).toContain(ROLLBACK)
      })
    )
  )

  it.effect("pages of a rephrased search are stable: consecutive pages equal one long page", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* seed
        const asked = { rephrasings: ["rollback deployment", "release notes"] }
        const long = yield* ask("release went wrong", { ...asked, limit: 6 })
        const first = yield* ask("release went wrong", { ...asked, limit: 3 })
        const second = yield* ask("release went wrong", { ...asked, limit: 3, offset: first.next_offset ?? 0 })
        expect(long.results.length).toBeGreaterThan(3)
        expect([...first.results, ...second.results].map((h) => h.context_id)).toEqual(
          long.results.map((h) => h.context_id)
        )
      })
    )
  )
})

describe("how much the rephrasings weigh", () => {
  it("the question alone weighs everything; with rephrasings it weighs as much as all of them together", () => {
    expect(wordingWeights(1)).toEqual([1])
    expect(wordingWeights(2)).toEqual([0.5, 0.5])
    const four = wordingWeights(1 + MAX_REPHRASINGS)
    expect(four[0]).toBe(0.5)
    expect(four.slice(1).reduce((a, b) => a + b, 0)).toBeCloseTo(0.5)
  })
})

describe("the bounds of rephrasings", () => {
  const decode = Schema.decodeUnknownEither(SearchRequest)
  it("at most three, each a non-empty short search", () => {
    const some = (n: number, text = "rollback") => ({ query: "q", rephrasings: Array.from({ length: n }, () => text) })
    expect(Either.isRight(decode(some(MAX_REPHRASINGS)))).toBe(true)
    expect(Either.isRight(decode({ query: "q" }))).toBe(true)
    expect(Either.isLeft(decode(some(MAX_REPHRASINGS + 1)))).toBe(true)
    expect(Either.isLeft(decode(some(1, "")))).toBe(true)
    expect(Either.isRight(decode(some(1, "x".repeat(MAX_REPHRASING_CHARS))))).toBe(true)
    expect(Either.isLeft(decode(some(1, "x".repeat(MAX_REPHRASING_CHARS + 1))))).toBe(true)
    expect(Either.isLeft(decode({ query: "q", rephrasings: "rollback" }))).toBe(true)
  })
})
