import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect } from "effect"
import type { JobId } from "../jobs/job.js"
import {
  fakeModelFactory,
  jobFinished as finished,
  inProcessClient,
  inProcessClientWith,
  TEST_INSTALLATION
} from "./daemon-core.test-support.js"

// Every daemon procedure, answered by the handlers blctxd serves, built from the same core
// layers, in process (the subprocess acceptance tests cover the socket and the supervisors).

const fixture = NodePath.resolve(import.meta.dirname, "..", "..", "fixtures", "codex", "new-format-turn-ids.jsonl")

type Client = Effect.Effect.Success<typeof inProcessClient>["client"]

/** Waits, on the job's own state, until it has finished (a generous bound, never a fixed sleep). */
const imported = (client: Client) =>
  Effect.gen(function* () {
    const submitted = yield* client.SubmitJob({ kind: "import", params: { paths: [fixture] } })
    return yield* finished(client, submitted.job.id)
  })

describe("the daemon's procedures, in process", () => {
  it.live("Ping names this installation, process and schema, and the index as judged", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client, paths } = yield* inProcessClient
        const identity = yield* client.Ping()
        expect(identity.installation_id).toBe(TEST_INSTALLATION)
        expect(identity.pid).toBe(4242)
        expect(identity.db_path).toBe(paths.database)
        expect(identity.schema_version).toBeGreaterThan(0)
        expect(["empty", "model_missing"]).toContain(identity.index_state)
        expect(identity.query_mode).toBe("lexical")
      })
    )
  )

  it.live("SubmitJob runs a known kind, and refuses unknown kinds and invalid params", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client } = yield* inProcessClient
        const job = yield* imported(client)
        expect(job.state).toBe("completed")
        expect(job.counts.files_imported).toBe(1)
        const unknown = yield* Effect.flip(client.SubmitJob({ kind: "no-such-kind" }))
        expect(unknown._tag).toBe("UnknownJobKind")
        const invalid = yield* Effect.flip(client.SubmitJob({ kind: "import", params: { paths: "not a list" } }))
        expect(invalid._tag).toBe("InvalidJobParams")
      })
    )
  )

  it.live("JobStatus reports a job and says when there is none", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client } = yield* inProcessClient
        const submitted = yield* client.SubmitJob({ kind: "gate" })
        const seen = yield* client.JobStatus({ job_id: submitted.job.id })
        expect(seen.id).toBe(submitted.job.id)
        expect(seen.kind).toBe("gate")
        const missing = yield* Effect.flip(
          client.JobStatus({ job_id: "00000000-0000-4000-8000-000000000000" as JobId })
        )
        expect(missing._tag).toBe("JobNotFound")
      })
    )
  )

  it.live("CancelJobs cancels a running job of a kind, and it never completes", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client, release } = yield* inProcessClient
        const submitted = yield* client.SubmitJob({ kind: "gate" })
        const { cancelled } = yield* client.CancelJobs({ kind: "gate" })
        expect(cancelled).toEqual([submitted.job.id])
        yield* Deferred.succeed(release, undefined)
        const job = yield* finished(client, submitted.job.id)
        expect(job.state).toBe("cancelled")
      })
    )
  )

  it.live("Search answers from the index, lexically with the reason, and rejects a bad date", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client } = yield* inProcessClient
        yield* imported(client)
        const answer = yield* client.Search({ query: "failing date test" })
        expect(answer.query_mode).toBe("lexical")
        expect(answer.query_mode_reason).toContain("no model in this test")
        // The turn's answer first, lifted by its request's words, then the request itself.
        expect(answer.results.slice(0, 2).map((h) => h.text)).toEqual([
          "The test assumed UTC; it now sets the zone explicitly and passes.",
          "Fix the failing date test."
        ])
        expect(answer.results[0]?.source).toMatchObject({ kind: "transcript_span", agent: "codex", path: fixture })
        const bad = yield* Effect.flip(client.Search({ query: "date", filters: { since: "last tuesday" } }))
        expect(bad._tag).toBe("InvalidQuery")
        expect(bad.message).toContain("last tuesday")
      })
    )
  )

  it.live("Search reads a date phrase in the query as a time filter and says so in the answer", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client } = yield* inProcessClient
        yield* imported(client)
        // The fixture's turn is at 2026-03-01T10:00Z: that day in any zone from UTC-10 to UTC+13.
        const [on, before, quoted] = yield* Effect.all([
          client.Search({ query: "failing date test on 2026-03-01" }),
          client.Search({ query: "failing date test before 2026-03-01" }),
          client.Search({ query: 'failing date test "on 2026-03-01"' })
        ])
        // The day's turn, its answer first (see the test above).
        expect(on.results.slice(0, 2).map((h) => h.text)).toEqual([
          "The test assumed UTC; it now sets the zone explicitly and passes.",
          "Fix the failing date test."
        ])
        expect(on.query).toBe("failing date test on 2026-03-01")
        expect(on.time_filter).toMatchObject({ phrase: "on 2026-03-01", applied: true, searched: "failing date test" })
        expect(before.results).toEqual([])
        expect(before.time_filter?.until).not.toBeNull()
        expect(quoted.time_filter).toBeUndefined()
        expect(quoted.results.length).toBeGreaterThan(0)
      })
    )
  )

  it.live("Recent lists turns in a range, and rejects a bad date with the same wording as Search", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client } = yield* inProcessClient
        yield* imported(client)
        const answer = yield* client.Recent({ since: "2026-03-01", until: "2026-03-02" })
        expect(answer.turns.length).toBeGreaterThan(0)
        expect(answer.turns.some((t) => t.messages.some((m) => m.text.includes("failing date test")))).toBe(true)
        const badRecent = yield* Effect.flip(client.Recent({ since: "last tuesday" }))
        const badSearch = yield* Effect.flip(client.Search({ query: "date", filters: { since: "last tuesday" } }))
        expect(badRecent._tag).toBe("InvalidQuery")
        expect(badRecent.message).toBe(badSearch.message)
      })
    )
  )

  it.live("Context expands a result to its turn, and rejects an id that names nothing", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client } = yield* inProcessClient
        yield* imported(client)
        const hit = (yield* client.Search({ query: "failing date test" })).results[0]
        const context = yield* client.Context({ context_id: hit?.context_id ?? "" })
        expect(context.messages.some((m) => m.is_anchor)).toBe(true)
        expect(context.messages.every((m) => m.source.kind === "transcript_span" && m.source.path === fixture)).toBe(
          true
        )
        const unknown = yield* Effect.flip(client.Context({ context_id: "c99999999" }))
        expect(unknown._tag).toBe("InvalidQuery")
        expect(unknown.message).toContain("c99999999")
      })
    )
  )

  it.live("ContextStatus reports the index state, why search is lexical, coverage and recent jobs", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client } = yield* inProcessClient
        const job = yield* imported(client)
        const status = yield* client.ContextStatus()
        expect(status.index_state).toBe("model_missing")
        expect(status.query_mode).toBe("lexical")
        expect(status.query_mode_reason).toContain("not installed")
        expect(status.model_fingerprint).toBeNull()
        expect(status.coverage.files.indexed).toBe(1)
        expect(status.recent_jobs.map((j) => j.id)).toContain(job.id)
      })
    )
  )

  it.live("PromptRecall keeps only hits that share most of the prompt's terms, lexically", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client } = yield* inProcessClient
        yield* imported(client)
        const recalled = yield* client.PromptRecall({
          prompt: "Please fix the failing date test in the parser",
          limit: 3,
          floor: 0.5
        })
        expect(recalled.query_mode).toBe("lexical")
        expect(recalled.hits[0]).toMatchObject({
          text: "Fix the failing date test.",
          role: "user",
          source: { kind: "transcript_span", path: fixture },
          relevance: 0.8
        })
        expect(recalled.hits.every((h) => h.relevance >= 0.5 && h.relevance <= 1)).toBe(true)
        // Words of the index appear ("test"), but most of the prompt is elsewhere: nothing clears the floor.
        const unrelated = yield* client.PromptRecall({
          prompt: "deploy the kubernetes helm chart and test the rollout",
          limit: 3,
          floor: 0.5
        })
        expect(unrelated.hits).toEqual([])
        const lower = yield* client.PromptRecall({
          prompt: "deploy the kubernetes helm chart and test the rollout",
          limit: 3,
          floor: 0.1
        })
        expect(lower.hits.length).toBeGreaterThan(0)
      })
    )
  )

  it.live("PromptRecall bounds its hits by a date phrase in the prompt and says how", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client } = yield* inProcessClient
        yield* imported(client)
        // The fixture's turn is at 2026-03-01T10:00Z: that day in any zone from UTC-10 to UTC+13.
        const [on, before] = yield* Effect.all([
          client.PromptRecall({ prompt: "fix the failing date test on 2026-03-01", limit: 3, floor: 0.5 }),
          client.PromptRecall({ prompt: "fix the failing date test before 2026-03-01", limit: 3, floor: 0.5 })
        ])
        expect(on.hits[0]?.text).toBe("Fix the failing date test.")
        expect(on.time_filter).toMatchObject({ phrase: "on 2026-03-01", applied: true })
        expect(before.hits).toEqual([])
        expect(before.time_filter).toMatchObject({ phrase: "before 2026-03-01", applied: true, since: null })
      })
    )
  )

  it.live("PromptRecall judges hybrid hits by their cosine similarity to the prompt", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client } = yield* inProcessClientWith({ factory: fakeModelFactory().layer, vectorReads: true })
        yield* imported(client)
        const recalled = yield* client.PromptRecall({ prompt: "Fix the failing date test.", limit: 3, floor: 0.6 })
        expect(recalled.query_mode).toBe("hybrid")
        expect(recalled.hits[0]?.text).toBe("Fix the failing date test.")
        expect(recalled.hits[0]?.relevance).toBeCloseTo(1, 5)
        expect(recalled.hits.every((h) => h.relevance >= 0.6 && h.relevance <= 1)).toBe(true)
        const unrelated = yield* client.PromptRecall({
          prompt: "kubernetes helm chart rollout strategy",
          limit: 3,
          floor: 0.6
        })
        expect(unrelated).toEqual({ query_mode: "hybrid", hits: [] })
      })
    )
  )
})
