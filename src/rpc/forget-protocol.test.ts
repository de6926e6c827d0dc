import { Either, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { Forget, ForgetPreview } from "./forget-protocol.js"

const ok = <A, I>(schema: Schema.Schema<A, I>, value: unknown) =>
  Either.isRight(Schema.decodeUnknownEither(schema)(value))
const long = (n: number) => "x".repeat(n)
const path = (n: number) => `/${"p".repeat(n - 1)}`

describe("forget requests are bounded and name exactly one selection", () => {
  it("bounds ids at 200, paths at 4,096, dates at 100 and tokens at 100 characters", () => {
    expect(ok(ForgetPreview.payloadSchema, { selector: { session: long(200) } })).toBe(true)
    expect(ok(ForgetPreview.payloadSchema, { selector: { session: long(201) } })).toBe(false)
    expect(ok(ForgetPreview.payloadSchema, { selector: { note: long(201) } })).toBe(false)
    expect(ok(ForgetPreview.payloadSchema, { selector: { context_session: long(201) } })).toBe(false)
    expect(ok(ForgetPreview.payloadSchema, { selector: { file: path(4_096) } })).toBe(true)
    expect(ok(ForgetPreview.payloadSchema, { selector: { file: path(4_097) } })).toBe(false)
    expect(ok(ForgetPreview.payloadSchema, { selector: { project: path(4_097) } })).toBe(false)
    expect(ok(ForgetPreview.payloadSchema, { selector: { since: long(101) } })).toBe(false)
    expect(ok(Forget.payloadSchema, { selector: { session: "s" }, token: long(100) })).toBe(true)
    expect(ok(Forget.payloadSchema, { selector: { session: "s" }, token: long(101) })).toBe(false)
  })

  it("refuses two kinds at once, none, and relative paths; a time range needs one bound", () => {
    expect(ok(ForgetPreview.payloadSchema, { selector: { session: "s", note: "n" } })).toBe(false)
    expect(ok(ForgetPreview.payloadSchema, { selector: { project: "/p", since: "2026-01-01" } })).toBe(false)
    expect(ok(ForgetPreview.payloadSchema, { selector: {} })).toBe(false)
    expect(ok(ForgetPreview.payloadSchema, { selector: { file: "relative.jsonl" } })).toBe(false)
    expect(ok(ForgetPreview.payloadSchema, { selector: { until: "2026-01-01" } })).toBe(true)
    expect(ok(ForgetPreview.payloadSchema, { selector: { since: "2026-01-01", until: "2026-02-01" } })).toBe(true)
  })
})
