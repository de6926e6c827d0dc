import { describe, expect, it } from "@effect/vitest"
import { redactSecrets } from "./redact.js"
import { corpusShapes, NEGATIVE_CORPUS, SECRET_CORPUS, secretFragments } from "./secret-corpus.js"
import { survivorsIn } from "./secret-corpus.test-support.js"

const redactedCorpus = SECRET_CORPUS.map((sample) => ({ sample, result: redactSecrets(sample.text) }))
const allFragments = [...new Set(SECRET_CORPUS.flatMap((s) => s.secrets.flatMap(secretFragments)))]

describe("the secret corpus", () => {
  for (const { sample, result } of redactedCorpus) {
    it(`redacts ${sample.shape} (${sample.family}, ${sample.where})`, () => {
      expect(result.total, result.text).toBeGreaterThanOrEqual(1)
      for (const secret of sample.secrets) expect(result.text).not.toContain(secret)
      const lower = result.text.toLowerCase()
      for (const fragment of sample.secrets.flatMap(secretFragments)) expect(lower).not.toContain(fragment)
    })
  }

  for (const sample of NEGATIVE_CORPUS) {
    it(`keeps ${sample.name}`, () => {
      expect(redactSecrets(sample.text)).toEqual({ text: sample.text, counts: {}, total: 0 })
    })
  }

  it("keeps the text around each secret", () => {
    const postgres = redactedCorpus.find((r) => r.sample.shape === "postgres URL")
    expect(postgres?.result.text).toBe(
      "Set DATABASE_URL=postgres://shop:[REDACTED:url_credentials]@db.internal.example:5432/shop and restart the worker."
    )
    const pem = redactedCorpus.find((r) => r.sample.shape === "RSA private key")
    expect(pem?.result.text).toBe(
      "Here is the deploy key, is the format right?\n[REDACTED:private_key]\nIt fails with invalid format."
    )
    const azure = redactedCorpus.find((r) => r.sample.shape === "azure storage connection string (AccountKey)")
    expect(azure?.result.text).toContain("AccountName=fakeacct;AccountKey=[REDACTED:azure_key];EndpointSuffix=")
  })

  it("no fragment of any secret is left anywhere in the redacted corpus (the acceptance test searches for them)", () => {
    const texts = [...redactedCorpus.map((r) => r.result.text), ...NEGATIVE_CORPUS.map((n) => n.text)].map((t) =>
      t.toLowerCase()
    )
    const left = allFragments.filter((fragment) => texts.some((t) => t.includes(fragment)))
    expect(left).toEqual([])
  })

  it("each secret's fragments are its own, so a survivor is counted against the right shape", () => {
    const shared = SECRET_CORPUS.flatMap((sample) =>
      sample.secrets
        .flatMap(secretFragments)
        .filter((f) => SECRET_CORPUS.some((other) => other !== sample && other.text.toLowerCase().includes(f)))
        .map((f) => `${sample.shape}: ${f}`)
    )
    expect(shared).toEqual([])
  })

  it("finds a survivor by its secret or by one of its words, in text and in bytes", () => {
    const stripe = "sk_live_51FakeLiveKey0123456789abcdefGHIJKLmnop"
    const places = [
      { where: "text", content: `left: ${stripe}` },
      { where: "tokens", content: "index term 51fakelivekey0123456789abcdefghijklmnop" },
      { where: "bytes", content: Buffer.from(`\u0000page ${stripe.slice(8)}\u0000`, "utf8") },
      { where: "clean", content: "sk_live_[REDACTED:stripe_key]" }
    ]
    expect(survivorsIn(places).map((s) => [s.shape, s.where])).toEqual([
      ["stripe sk_live", "text"],
      ["stripe sk_live", "tokens"],
      ["stripe sk_live", "bytes"]
    ])
  })

  it("is idempotent over the corpus", () => {
    for (const { result } of redactedCorpus)
      expect(redactSecrets(result.text)).toEqual({ ...result, counts: {}, total: 0 })
  })

  it("covers every family with several samples, and metadata", () => {
    const byFamily = new Map<string, number>()
    for (const s of SECRET_CORPUS) byFamily.set(s.family, (byFamily.get(s.family) ?? 0) + 1)
    for (const family of ["jwt", "url credentials", "stripe", "npm", "google oauth", "azure", "twilio", "discord"]) {
      expect(byFamily.get(family) ?? 0, family).toBeGreaterThanOrEqual(3)
    }
    expect(byFamily.get("private key") ?? 0).toBeGreaterThanOrEqual(8)
    expect(byFamily.get("keyed value") ?? 0).toBeGreaterThanOrEqual(8)
    expect(SECRET_CORPUS.filter((s) => s.where === "cwd").length).toBeGreaterThanOrEqual(3)
    expect(corpusShapes().length).toBe(SECRET_CORPUS.length)
  })
})
