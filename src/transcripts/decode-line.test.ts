import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { fuzzParameters } from "../fuzz.test-support.js"
import { decodeLine, exceedsNestingDepth, MAX_NESTING_DEPTH, nestingDepth } from "./decode-line.js"
import type { RawLine } from "./line-splitter.js"

const encoder = new TextEncoder()
const raw = (text: string): RawLine => {
  const bytes = encoder.encode(text)
  return { line: 1, byte_start: 0, byte_end: bytes.length, bytes, terminated: true }
}
const decode = (text: string) => decodeLine(raw(text), 1024 * 1024)

const nestedArrays = (depth: number, inner = "1") => `${"[".repeat(depth)}${inner}${"]".repeat(depth)}`
const nestedObjects = (depth: number, inner = "1") => {
  let text = inner
  for (let i = 0; i < depth; i++) text = `{"a":${text}}`
  return text
}

/** The nesting depth of a decoded JSON value, computed the obvious (recursive) way. */
const depthOf = (value: unknown): number => {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf))
  if (typeof value === "object" && value !== null) return 1 + Math.max(0, ...Object.values(value).map(depthOf))
  return 0
}

describe("decodeLine on hostile lines", () => {
  it("a line of arrays nested 5,000 deep is an unreadable record saying so, not a crash", () => {
    const record = decode(nestedArrays(5_000))
    expect(record.kind).toBe("parse_error")
    expect(record.kind === "parse_error" && record.reason).toBe("too_deep")
    expect(record.kind === "parse_error" && record.message).toContain(`${MAX_NESTING_DEPTH}`)
  })

  it("a `type` holding a deeply nested object is too deep; at the limit it is only not a record", () => {
    const deep = decode(`{"type":${nestedObjects(5_000)}}`)
    expect(deep.kind === "parse_error" && deep.reason).toBe("too_deep")
    // One level for the envelope: the whole line is exactly at the limit.
    const atLimit = decode(`{"type":${nestedObjects(MAX_NESTING_DEPTH - 1)}}`)
    expect(atLimit.kind === "parse_error" && atLimit.reason).toBe("not_a_record")
    // The message names the problem without echoing the value.
    expect(atLimit.kind === "parse_error" && atLimit.message).toBe('"type" is an object, not a string')
  })

  it("a payload nested up to the limit is a record; one level more is too deep", () => {
    const at = decode(`{"type":"event_msg","payload":${nestedArrays(MAX_NESTING_DEPTH - 1)}}`)
    expect(at.kind).toBe("record")
    const over = decode(`{"type":"event_msg","payload":${nestedArrays(MAX_NESTING_DEPTH)}}`)
    expect(over.kind === "parse_error" && over.reason).toBe("too_deep")
  })

  it("brackets inside strings, escaped quotes and backslashes included, do not count", () => {
    const text = JSON.stringify({
      type: "response_item",
      payload: { output: `\\"${"[{".repeat(10_000)}\\`, other: '"]}\\"[' }
    })
    expect(nestingDepth(encoder.encode(text), MAX_NESTING_DEPTH)).toBe(2)
    expect(decode(text).kind).toBe("record")
    // Long strings (crossed from quote to quote) ending in a backslash, or holding escaped quotes.
    for (const [a, b] of [
      ["x".repeat(100), "[[[["],
      [`${"x".repeat(100)}\\`, "[[[["],
      [`${"x".repeat(100)}\\\\`, "{{{{"],
      [`${"x".repeat(100)}"[[["`, "]]"],
      [`${"\\".repeat(100)}"`, "[[[["]
    ]) {
      expect(nestingDepth(encoder.encode(JSON.stringify([a, b, [a]])), MAX_NESTING_DEPTH)).toBe(2)
    }
  })

  it("lines that are not record objects say what they are, briefly", () => {
    const messages = ["[1,2,3]", '"text"', "42", "null", '{"payload":{}}', '{"type":"x","timestamp":[1]}'].map((t) => {
      const r = decode(t)
      return r.kind === "parse_error" ? `${r.reason}: ${r.message}` : "record"
    })
    expect(messages).toEqual([
      "not_a_record: line is an array, not a record object",
      "not_a_record: line is a string, not a record object",
      "not_a_record: line is a number, not a record object",
      "not_a_record: line is null, not a record object",
      'not_a_record: record has no "type" field',
      'not_a_record: "timestamp" is an array, not a string'
    ])
  })

  it("the pre-scan crosses long strings full of quotes, backslashes and brackets exactly", () => {
    const tricky = fc.string({ unit: fc.constantFrom('"', "\\", "[", "{", "]", "}", "a", "é"), maxLength: 400 })
    const value = fc.array(fc.oneof(tricky, fc.array(tricky, { maxLength: 3 })), { maxLength: 4 })
    fc.assert(
      fc.property(value, (v) => {
        const bytes = encoder.encode(JSON.stringify(v))
        expect(nestingDepth(bytes, 64)).toBe(depthOf(v))
        expect(exceedsNestingDepth(bytes, 1)).toBe(depthOf(v) > 1)
      }),
      fuzzParameters(500)
    )
  })

  it("the pre-scan agrees with the depth of the parsed value, and stops past the limit", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), (value) => {
        const bytes = encoder.encode(JSON.stringify(value))
        expect(nestingDepth(bytes, 64)).toBe(depthOf(value))
        const depth = depthOf(value)
        if (depth > 2) expect(nestingDepth(bytes, 2)).toBe(3)
        for (const limit of [0, 1, 2, 3, 5]) expect(exceedsNestingDepth(bytes, limit)).toBe(depth > limit)
      }),
      fuzzParameters(500)
    )
  })
})
