import { Either, ParseResult, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { ImportParams } from "../importer/import-kind.js"
import { SearchFilters } from "../retrieval/contract.js"
import { Context, Recent, Search } from "./history-protocol.js"
import { CancelJobs, DaemonRpcs, SubmitJob } from "./protocol.js"

const decode = <A, I>(schema: Schema.Schema<A, I>, value: unknown) => Schema.decodeUnknownEither(schema)(value)
const rejected = <A, I>(schema: Schema.Schema<A, I>, value: unknown) => {
  const result = decode(schema, value)
  expect(Either.isLeft(result), `accepted: ${JSON.stringify(value).slice(0, 200)}`).toBe(true)
  return Either.isLeft(result) ? String(result.left) : ""
}
const accepted = <A, I>(schema: Schema.Schema<A, I>, value: unknown) =>
  expect(Either.isRight(decode(schema, value)), JSON.stringify(value).slice(0, 200)).toBe(true)

const long = (n: number) => "x".repeat(n)
const path = (n: number) => `/${"p".repeat(n - 1)}`

describe("request payloads are bounded to what a query needs", () => {
  it("a query is at most 4,000 characters", () => {
    accepted(Search.payloadSchema, { query: long(4_000) })
    expect(rejected(Search.payloadSchema, { query: long(4_001) })).toContain("4000")
    rejected(Search.payloadSchema, { query: long(15 * 1024 * 1024) })
  })

  it("filters: project and paths at most 4,096, session ids at most 200, dates at most 100", () => {
    accepted(SearchFilters, { project: path(4_096), session: long(200), since: "2026-01-01", until: "2026-02-01" })
    rejected(SearchFilters, { project: path(4_097) })
    rejected(SearchFilters, { session: long(201) })
    rejected(SearchFilters, { since: long(101) })
    rejected(SearchFilters, { until: long(101) })
    rejected(Search.payloadSchema, { query: "q", filters: { project: path(5_000) } })
  })

  it("recent and context bound their strings", () => {
    accepted(Recent.payloadSchema, { project: path(4_096), since: "2026-01-01" })
    rejected(Recent.payloadSchema, { project: path(4_097) })
    rejected(Recent.payloadSchema, { since: long(101) })
    rejected(Recent.payloadSchema, { until: long(101) })
    rejected(Context.payloadSchema, { context_id: long(41) })
  })

  it("job kinds are at most 200 characters and cancel lists at most 10,000 ids", () => {
    accepted(SubmitJob.payloadSchema, { kind: "import", params: { paths: ["/a"] } })
    rejected(SubmitJob.payloadSchema, { kind: long(201) })
    rejected(CancelJobs.payloadSchema, { kind: long(201) })
    const id = "0199a000-0000-7000-8000-000000000001"
    accepted(CancelJobs.payloadSchema, { job_ids: Array.from({ length: 10_000 }, () => id) })
    rejected(CancelJobs.payloadSchema, { job_ids: Array.from({ length: 10_001 }, () => id) })
  })

  it("an import's paths are at most 4,096 characters each", () => {
    accepted(ImportParams, { paths: [path(4_096)] })
    rejected(ImportParams, { paths: [path(4_097)] })
    rejected(ImportParams, { paths: ["/a"], origin: long(201) })
  })
})

describe("a request the daemon cannot decode", () => {
  const token = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
  const query = `why did ${token} fail ${"lorem ipsum ".repeat(8_400)}`.slice(0, 100_000)
  const payloadOf = (tag: string) => {
    const rpc = DaemonRpcs.requests.get(tag)
    if (rpc === undefined) throw new Error(`no procedure ${tag}`)
    return rpc.payloadSchema as Schema.Schema<unknown, unknown>
  }

  it("is refused, as @effect/rpc formats it, in a short, redacted message", () => {
    const refused = Schema.decodeUnknownEither(payloadOf("Search"))({ query })
    if (Either.isRight(refused)) throw new Error("a 100,000-character query was accepted")
    for (const text of [ParseResult.TreeFormatter.formatErrorSync(refused.left), refused.left.message]) {
      expect(text.length).toBeLessThan(300)
      expect(text).toContain("query")
      expect(text).toContain("4000")
      expect(text).not.toContain(token)
    }
  })

  it("keeps each procedure's own decoding", () => {
    expect(Either.isRight(Schema.decodeUnknownEither(payloadOf("Search"))({ query: "q" }))).toBe(true)
    expect([...DaemonRpcs.requests.keys()]).toContain("Forget")
  })
})
