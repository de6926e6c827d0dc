import { existsSync, readdirSync } from "node:fs"
import * as NodePath from "node:path"
import { afterEach, describe, expect, it } from "vitest"
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
    expect(readdirSync(NodePath.join(modelsDir(h), folder ?? ""))).toHaveLength(6)

    // Reinstalling reuses the cache without fetching anything.
    const before = server.requests.length
    const again = await h.blctx(["install", "codex", "--step", "embedding_model", "--json"])
    expect(check(parseJson<Report>(again), "embedding_model")?.detail).toMatch(/^model already in /)
    expect(server.requests).toHaveLength(before)

    const purge = await h.blctx(["uninstall", "codex", "--purge", "--json"])
    expect(check(parseJson<Report>(purge), "embedding_model")?.detail).toBe("removed 6 model files")
    expect(existsSync(modelsDir(h))).toBe(false)
  })
})

describe("embedding_model without a model", () => {
  it("fails status with the install command when no model is installed", async () => {
    const h = makeIsolatedHome()
    home = h
    const status = await h.blctx(["status", "--step", "embedding_model", "--json"])
    expect(status.code).toBe(1)
    const c = check(parseJson<Report>(status), "embedding_model")
    expect(c?.status).toBe("failed")
    expect(c?.detail).toBe("the embedding model Qdrant/bge-small-en@8791246cc2a7 is not installed")
    expect(c?.remediation).toBe("Run: blctx install codex --step embedding_model")
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
