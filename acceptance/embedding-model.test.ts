import { existsSync, readdirSync } from "node:fs"
import { createRequire } from "node:module"
import * as NodePath from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { writeSyntheticHistory } from "../bench/synthetic-history.js"
import { tinyModelConfig } from "../testing/model-test-folder.js"
import { makeDaemonHome, waitFor } from "./support/daemon-harness.js"
import { type IsolatedHome, makeIsolatedHome, parseJson } from "./support/isolated-home.js"
import { type ModelServer, modelData, serveTinyModel, useTinyModel, writeBlctxConfig } from "./support/model-server.js"

interface Check {
  readonly id: string
  readonly status: string
  readonly detail: string
  readonly remediation?: string
}
interface Report {
  readonly exit_code: number
  readonly checks: ReadonlyArray<Check>
}

const data = modelData()
const check = (report: Report, id: string) => report.checks.find((c) => c.id === id)

let home: IsolatedHome | undefined
let server: ModelServer | undefined
afterEach(async () => {
  home?.dispose()
  await server?.close()
  home = undefined
  server = undefined
})

const modelsDir = (h: IsolatedHome) => NodePath.join(h.xdg.cache, "blctx", "models")

describe("blctx install codex --step embedding_model (tiny model served locally)", () => {
  it.skipIf(!data)("downloads with a resumed interruption, verifies, and prints only JSON", async () => {
    const h = makeIsolatedHome()
    home = h
    server = await serveTinyModel(data ?? "", { cutFirst: ["model_optimized.onnx"] })
    useTinyModel(h, data ?? "", server)

    const install = await h.blctx(["install", "codex", "--step", "embedding_model", "--json"])
    expect(install.code).toBe(0)
    const report = parseJson<Report>(install)
    expect(report.checks.map((c) => [c.id, c.status])).toEqual([
      ["data_directory", "passed"],
      ["embedding_model", "passed"]
    ])
    expect(check(report, "embedding_model")?.detail).toMatch(/^downloaded [\d.]+ MiB, resumed [\d.]+ MiB; verified/)
    const ranges = server.requests
      .filter((r) => r.path.endsWith("model_optimized.onnx") && r.status !== 302)
      .map((r) => r.range ?? "")
    expect(ranges).toHaveLength(2)
    expect(ranges[1]).toMatch(/^bytes=\d+-$/)

    const status = await h.blctx(["status", "--step", "embedding_model", "--json"])
    expect(status.code).toBe(0)
    expect(check(parseJson<Report>(status), "embedding_model")?.detail).toMatch(
      /^blctx-test\/tiny-encoder@test, 8 dims, fingerprint [0-9a-f]{16}; sanity check ranked passage 1 first/
    )
    // Verification is offline: with the server gone, status still passes.
    await server.close()
    server = undefined
    expect((await h.blctx(["status", "--step", "embedding_model", "--json"])).code).toBe(0)
  })

  it.skipIf(!data)("uninstall keeps the model; --purge removes it", async () => {
    const h = makeIsolatedHome()
    home = h
    server = await serveTinyModel(data ?? "")
    useTinyModel(h, data ?? "", server)
    expect((await h.blctx(["install", "codex", "--step", "embedding_model", "--json"])).code).toBe(0)
    const [folder] = readdirSync(modelsDir(h))
    expect(folder).toMatch(/^blctx-test--tiny-encoder--[0-9a-f]{16}$/)

    const uninstall = await h.blctx(["uninstall", "codex", "--json"])
    expect(check(parseJson<Report>(uninstall), "embedding_model")?.detail).toMatch(/^model kept in /)
    // The six model files and the record of their checks.
    expect(readdirSync(NodePath.join(modelsDir(h), folder ?? "")).sort()).toEqual([
      ".blctx-verification.json",
      "config.json",
      "model_optimized.onnx",
      "special_tokens_map.json",
      "tokenizer.json",
      "tokenizer_config.json",
      "vocab.txt"
    ])

    // Reinstalling reuses the cache without fetching anything.
    const before = server.requests.length
    const again = await h.blctx(["install", "codex", "--step", "embedding_model", "--json"])
    expect(check(parseJson<Report>(again), "embedding_model")?.detail).toMatch(/^model already in /)
    expect(server.requests).toHaveLength(before)

    const purge = await h.blctx(["uninstall", "codex", "--purge", "--json"])
    expect(check(parseJson<Report>(purge), "embedding_model")?.detail).toBe("removed 7 model files")
    expect(existsSync(modelsDir(h))).toBe(false)
  })
})

interface SqliteDatabase {
  prepare(sql: string): { all(...params: ReadonlyArray<unknown>): Array<Record<string, unknown>> }
  close(): void
}
const Database = createRequire(import.meta.url)("better-sqlite3") as new (
  file: string,
  options?: { readonly readonly?: boolean }
) => SqliteDatabase

/** Chunks with a vector, and rows in any vector table, as the daemon's database holds them now. */
const storedVectors = (database: string) => {
  const db = new Database(database, { readonly: true })
  try {
    const one = (sql: string) => Number(db.prepare(sql).all()[0]?.n ?? 0)
    return {
      chunks: one("SELECT count(*) AS n FROM chunks"),
      tokenizers: db
        .prepare("SELECT DISTINCT tokenizer FROM chunks ORDER BY tokenizer")
        .all()
        .map((r) => String(r.tokenizer)),
      embedded: one("SELECT count(*) AS n FROM chunks WHERE vector_fingerprint IS NOT NULL"),
      vectorTables: one(
        "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name LIKE 'vectors\\_%' ESCAPE '\\'"
      )
    }
  } finally {
    db.close()
  }
}

interface Search {
  readonly query_mode: string
  readonly query_mode_reason: string | null
  readonly results: ReadonlyArray<{
    readonly context_id: string
    readonly text: string
    readonly score: { readonly kind: string }
  }>
}

interface Context {
  readonly anchor: { readonly chunk: { readonly char_start: number; readonly char_end: number } | null }
  readonly messages: ReadonlyArray<{ readonly is_anchor: boolean; readonly text: string }>
}

/** The text a context id names now: its anchor message's characters in the anchor's range. */
const citedText = async (h: IsolatedHome, contextId: string) => {
  const run = await h.blctx(["context", contextId, "--limit", "200"])
  expect(run.code, `${contextId}: ${run.stdout}${run.stderr}`).toBe(0)
  const context = JSON.parse(run.stdout) as Context
  const anchor = context.messages.find((m) => m.is_anchor)
  return anchor?.text.slice(context.anchor.chunk?.char_start, context.anchor.chunk?.char_end)
}

describe("a model is used only after it passed every check (tiny model served locally)", () => {
  it.skipIf(!data)(
    "a failed sanity check leaves search lexical, saying why, with no vectors; a passing rerun makes it hybrid",
    async () => {
      const h = makeDaemonHome("detached")
      home = h
      server = await serveTinyModel(data ?? "")
      const config = tinyModelConfig(data ?? "", server.endpoint)
      // The query is passage 1; claiming passage 0 must rank first makes the check fail.
      writeBlctxConfig(h, { model: { ...config.model, sanity: { ...config.model.sanity, expected_first: 0 } } })

      const failed = await h.blctx(["install", "codex", "--step", "embedding_model", "--json"])
      expect(failed.code).toBe(1)
      const step = check(parseJson<Report>(failed), "embedding_model")
      expect(step?.status).toBe("failed")
      expect(step?.detail).toMatch(
        /^model check failed: ranked-retrieval check failed: passage 1 ranked first, expected 0 \(scores [\d., ]+\)$/
      )
      const whatFailed = (step?.detail ?? "").replace(/^model check failed: /, "")

      const service = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
      expect(service.code, service.stdout + service.stderr).toBe(0)
      const files = writeSyntheticHistory(NodePath.join(h.home, "history"), 2, 10, 3, 900)
      const indexed = await h.blctx(["index", ...files, "--wait"])
      expect(indexed.code, indexed.stdout + indexed.stderr).toBe(0)
      expect((JSON.parse(indexed.stdout) as { job: { state: string } }).job.state).toBe("completed")

      const lexical = await h.blctx(["search", "deploy", "rollout"])
      expect(lexical.code, lexical.stderr).toBe(0)
      const found = JSON.parse(lexical.stdout) as Search
      expect(found.query_mode).toBe("lexical")
      expect(found.query_mode_reason).toBe(
        `the embedding model has not passed its checks: ${whatFailed}; run \`blctx install codex --step embedding_model\``
      )
      expect(found.results.length).toBeGreaterThan(0)
      expect(found.results.every((r) => r.score.kind === "bm25")).toBe(true)
      const status = JSON.parse((await h.blctx(["index-status"])).stdout) as {
        index_state: string
        query_mode_reason: string
        model_fingerprint: string | null
        coverage: { vectors: ReadonlyArray<unknown>; vectors_pending: number }
      }
      expect(status.index_state).toBe("model_missing")
      expect(status.query_mode_reason).toBe(found.query_mode_reason)
      expect(status.model_fingerprint).toBeNull()
      expect(status.coverage.vectors).toEqual([])
      const before = storedVectors(h.database)
      expect(before.chunks).toBeGreaterThan(0)
      expect(before).toMatchObject({ embedded: 0, vectorTables: 0 })
      expect(status.coverage.vectors_pending).toBe(before.chunks)

      // The right check: the rerun records the model as verified, the daemon loads it and embeds.
      writeBlctxConfig(h, config)
      const fixed = await h.blctx(["install", "codex", "--step", "embedding_model", "--json"])
      expect(fixed.code, fixed.stdout).toBe(0)
      const hybrid = await waitFor(
        "search to become hybrid",
        async () => {
          const r = JSON.parse((await h.blctx(["search", "deploy", "rollout"])).stdout) as Search
          return r.query_mode === "hybrid" ? r : undefined
        },
        120_000
      )
      expect(hybrid.query_mode_reason).toBeNull()
      expect(hybrid.results[0]?.score.kind).toBe("fused")
      const after = storedVectors(h.database)
      expect(after.embedded).toBe(after.chunks)
      expect(after.vectorTables).toBeGreaterThan(0)

      // Installing the model cut the chunks again for its tokenizer; every id the lexical answer
      // handed out still names the same text.
      expect(after.tokenizers).not.toEqual(before.tokenizers)
      const cited = await Promise.all(found.results.map((r) => citedText(h, r.context_id)))
      expect(cited).toEqual(found.results.map((r) => r.text))
    },
    300_000
  )
})

describe("embedding_model without a model", () => {
  it("fails status with the install command when no model is installed", async () => {
    const h = makeIsolatedHome()
    home = h
    const status = await h.blctx(["status", "--step", "embedding_model", "--json"])
    expect(status.code).toBe(1)
    const c = check(parseJson<Report>(status), "embedding_model")
    expect(c?.status).toBe("failed")
    const folder = NodePath.join(h.xdg.cache, "blctx", "models", "Qdrant--bge-small-en--")
    const config = NodePath.join(h.xdg.config, "blctx", "config.json")
    expect(c?.detail).toContain(`the embedding model Qdrant/bge-small-en@8791246cc2a7 is not installed (no ${folder}`)
    expect(c?.remediation).toBe(
      `Run: blctx install codex --step embedding_model (it downloads 127.6 MiB from https://huggingface.co; to download from a mirror or a local server, set "model": {"endpoint": "URL"} in ${config} (files are fetched from URL/<repo>/resolve/<revision>/<name>))`
    )

    // Doctor looks deeper: what is missing, where it looked, what to do (with the mirror setting).
    const doctor = await h.blctx(["doctor", "--step", "embedding_model", "--json"])
    const d = check(parseJson<Report>(doctor), "embedding_model")
    expect(d?.detail).not.toContain("no deeper check")
    expect(d?.detail).toContain("Qdrant/bge-small-en@8791246cc2a7: 6 files, 127.6 MiB")
    expect(d?.detail).toContain(`missing from ${folder}`)
    expect(d?.detail).toContain("model_optimized.onnx")
    expect(d?.detail).toContain(`"model": {"endpoint": "URL"} in ${config}`)
  })

  it("names the bad field of config.json", async () => {
    const h = makeIsolatedHome()
    home = h
    writeBlctxConfig(h, { vector_store: { kind: "qdrant", url: "ftp://x" } })
    const status = await h.blctx(["status", "--step", "embedding_model", "--json"])
    const c = check(parseJson<Report>(status), "embedding_model")
    expect(c?.status).toBe("failed")
    expect(c?.detail).toMatch(/config .*config\.json field "vector_store\.url": must be an http:\/\/ or https:\/\/ URL/)
    expect(c?.remediation).toContain('Fix "vector_store.url" in')
  })
})
