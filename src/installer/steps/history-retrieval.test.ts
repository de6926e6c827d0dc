import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { NodeSafeFsLive } from "../../../layers/node-safe-fs.js"
import { makeFakeMcpProbe, ok, toolError } from "../../../testing/fake-mcp-probe.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths } from "../../paths/paths.js"
import { ProgramPaths } from "../../paths/program-paths.js"
import type { StepFailure } from "../step.js"
import { HISTORY_INDEX_FILE } from "./history-index.js"
import { historyRetrievalStep, queryWordsOf } from "./history-retrieval.js"
import { INSTALLATION, pathInputs, runOf, useActiveHome } from "./service-steps.test-support.js"

const fresh = useActiveHome()
const FILE = "/home/u/.codex/sessions/2026/02/02/rollout-2026-02-02T09-00-00-session-1.jsonl"
const MESSAGE = "We decided to deploy the shop API with a blue-green rollout."
const STATUS = {
  index_state: "model_missing",
  query_mode: "lexical",
  query_mode_reason: "no embedding model is installed"
}
const source = (path: string, line: number) => ({
  kind: "transcript_span",
  agent: "codex",
  path,
  line,
  byte_start: 0,
  byte_end: 1
})
const RECENT = {
  turns: [
    { source_session_id: "s1", messages: [{ context_id: "c7", text: MESSAGE, source: source(FILE, 7), role: "user" }] }
  ]
}
const SEARCH = {
  query_mode: "lexical",
  query_mode_reason: "no embedding model is installed",
  results: [{ context_id: "c7", text: MESSAGE, source: source(FILE, 7) }]
}
const CONTEXT = { total_messages: 9, messages: [{ is_anchor: true }, { is_anchor: false }] }

const writeRecord = (paths: ReadonlyArray<string> | null) => {
  const file = NodePath.join(fresh.paths().stateDir, HISTORY_INDEX_FILE)
  Fs.mkdirSync(NodePath.dirname(file), { recursive: true })
  if (paths !== null)
    Fs.writeFileSync(file, JSON.stringify({ version: 1, job_id: "8c0f8a52-5a4e-4a43-9a55-8c9a4a1f1a11", paths }))
}

const setUp = (paths: ReadonlyArray<string> | null = [FILE]) => {
  writeRecord(paths)
  const probe = makeFakeMcpProbe({
    tools: [],
    answers: { context_status: ok(STATUS), recent: ok(RECENT), search: ok(SEARCH), context: ok(CONTEXT) }
  })
  const layer = Layer.mergeAll(
    ManifestStore.Default,
    Layer.succeed(ProgramPaths, {
      node: "/usr/bin/node",
      cli: "/x/cli",
      daemon: "/x/daemon",
      mcp: "/x/blctx-mcp.mjs",
      hook: "/x/blctx-hook.mjs",
      skill: "/x/skills/base-layer-context/SKILL.md"
    }),
    probe.layer
  ).pipe(Layer.provideMerge(Paths.layerFrom(pathInputs(fresh.home()))), Layer.provideMerge(NodeSafeFsLive))
  const run = Effect.flatMap(historyRetrievalStep, (step) => Effect.either(step.verify(runOf("status")))).pipe(
    Effect.provide(layer)
  )
  return { probe, run }
}

const failureOf = (result: Either.Either<unknown, StepFailure>): StepFailure => {
  if (Either.isRight(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.right)}`)
  return result.left
}

describe("history_retrieval", () => {
  it("takes a few plain words of a message as the query", () => {
    expect(queryWordsOf(MESSAGE)).toBe("decided deploy the shop API with")
    expect(queryWordsOf("ok")).toBeNull()
  })

  it.effect("searches words of a recent imported message, finds it with provenance and expands it; says lexical", () =>
    Effect.gen(function* () {
      const { probe, run } = setUp()
      const detail = Either.getOrThrow(yield* run).detail
      expect(detail).toMatch(
        new RegExp(
          `^search "decided deploy the shop API with" found ${FILE.replaceAll(".", "\\.")}:7 \\(query_mode lexical \\(words only: no embedding model is installed\\)\\); context expanded it to 2 of 9 messages; \\d+ ms through MCP$`
        )
      )
      expect(probe.state.launched[0]?.command).toBe("/usr/bin/node")
      expect(probe.state.launched[0]?.args).toEqual(
        expect.arrayContaining(["/x/blctx-mcp.mjs", "--installation-id", INSTALLATION])
      )
      expect(probe.state.calls.map((c) => c.name)).toEqual(["context_status", "recent", "search", "context"])
      expect(probe.state.calls[3]?.args).toMatchObject({ context_id: "c7" })
    })
  )

  it.effect("with no session imported, checks the empty index: search answers with no results", () =>
    Effect.gen(function* () {
      for (const record of [[], null]) {
        const { probe, run } = setUp(record)
        probe.state.answers.recent = ok({ turns: [] })
        probe.state.answers.search = ok({ ...SEARCH, results: [] })
        expect(Either.getOrThrow(yield* run).detail).toMatch(
          /^no session indexed yet: search "blctx history retrieval check" answered with 0 results \(query_mode lexical \(words only: no embedding model is installed\)\); \d+ ms through MCP$/
        )
        expect(probe.state.calls.map((c) => c.name)).toEqual(["context_status", "recent", "search"])
      }
    })
  )

  it.effect("with no session imported, finds a session the index holds all the same (captured by the hooks)", () =>
    Effect.gen(function* () {
      const { probe, run } = setUp(null)
      expect(Either.getOrThrow(yield* run).detail).toContain(`found ${FILE}:7`)
      expect(probe.state.calls.map((c) => c.name)).toEqual(["context_status", "recent", "search", "context"])
    })
  )

  it.effect("with no session imported, an index that cannot answer a search fails", () =>
    Effect.gen(function* () {
      const { probe, run } = setUp([])
      probe.state.answers.recent = ok({ turns: [] })
      probe.state.answers.search = toolError("store_error", "search", "database is locked", "Retry in a moment")
      expect(failureOf(yield* run).detail).toBe("search answered an error (store_error): database is locked")
    })
  )

  it.effect("fails when search finds nothing from the imported files", () =>
    Effect.gen(function* () {
      const { probe, run } = setUp()
      probe.state.answers.search = ok({
        ...SEARCH,
        results: [{ ...SEARCH.results[0], source: source("/elsewhere.jsonl", 1) }]
      })
      const f = failureOf(yield* run)
      expect(f.detail).toContain("search found nothing from the imported sessions")
      expect(probe.state.calls.some((c) => c.name === "context")).toBe(false)
    })
  )

  it.effect("an isError answer fails with its message and remediation", () =>
    Effect.gen(function* () {
      const { probe, run } = setUp()
      probe.state.answers.search = toolError("store_error", "search", "database is locked", "Retry in a moment")
      const f = failureOf(yield* run)
      expect(f.detail).toBe("search answered an error (store_error): database is locked")
      expect(f.remediation).toBe("Retry in a moment")
    })
  )

  it.effect("fails when the recent turns hold no message from the imported files", () =>
    Effect.gen(function* () {
      const { probe, run } = setUp()
      probe.state.answers.recent = ok({ turns: [] })
      expect(failureOf(yield* run).detail).toContain("recent shows no message")
    })
  )
})
