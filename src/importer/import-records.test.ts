import { describe, expect, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import fc from "fast-check"
import { fuzzParameters } from "../fuzz.test-support.js"
import { makeClassifier } from "../transcripts/classify.js"
import { decidedByType } from "../transcripts/codex-records.js"
import { decodeLine } from "../transcripts/decode-line.js"
import { recordsOf } from "../transcripts/reader.js"
import type { TranscriptRecord } from "../transcripts/record.js"
import type { TranscriptHandle } from "../transcripts/transcript-files.js"
import { forEachImportRecord, skimEntry } from "./import-records.js"

const encoder = new TextEncoder()

/** A transcript in memory; each read returns at most `readLimit` bytes, to cut lines anywhere. */
const memoryHandle = (bytes: Uint8Array, readLimit = Number.POSITIVE_INFINITY): TranscriptHandle => ({
  path: "/memory.jsonl",
  size: bytes.length,
  mtimeMs: 0,
  dev: 0,
  ino: 0,
  read: (position, length) => Effect.sync(() => bytes.slice(position, position + Math.min(length, readLimit))),
  readInto: (position, buffer) =>
    Effect.sync(() => {
      const part = bytes.subarray(position, position + Math.min(buffer.length, readLimit))
      buffer.set(part)
      return part.length
    })
})

const viaReader = (bytes: Uint8Array, chunkBytes: number, maxLineBytes: number) =>
  Effect.runSync(Stream.runCollect(recordsOf(memoryHandle(bytes), { chunkBytes, maxLineBytes }))).pipe((c) => [...c])

const viaImporter = (
  bytes: Uint8Array,
  options: { chunkBytes: number; maxLineBytes: number; skimFrom: number; readLimit?: number }
) => {
  const out: Array<TranscriptRecord> = []
  Effect.runSync(
    forEachImportRecord(memoryHandle(bytes, options.readLimit), { ...options, decidedByType }, (r) => out.push(r))
  )
  return out
}

const summaryOf = (records: ReadonlyArray<TranscriptRecord>) => {
  const c = makeClassifier({ decisions: false })
  for (const r of records) c.push(r)
  return c.finish()
}

const line = (value: unknown) => JSON.stringify(value)

/** Payload types of every kind: decided by type alone, messages, turn bookkeeping, unknown. */
const recordTypes = fc.constantFrom<readonly [string, string | null]>(
  ["response_item", "function_call_output"],
  ["response_item", "reasoning"],
  ["response_item", "function_call"],
  ["response_item", "custom_tool_call_output"],
  ["response_item", "message"],
  ["event_msg", "token_count"],
  ["event_msg", "exec_command_end"],
  ["event_msg", "user_message"],
  ["event_msg", "agent_message"],
  ["event_msg", "task_started"],
  ["event_msg", "task_complete"],
  ["world_state", null],
  ["token_usage_record", null],
  ["turn_context", null],
  ["session_meta", null],
  ["hologram", "x"]
)

/** A record line as Codex writes it, with arbitrary JSON in its payload and now and then extra fields. */
const recordLine = fc
  .record({
    kind: recordTypes,
    timestamp: fc.option(fc.oneof(fc.constant("2026-03-01T10:00:00.000Z"), fc.integer()), { nil: undefined }),
    body: fc.jsonValue({ maxDepth: 4 }),
    text: fc.string({ unit: "binary", maxLength: 40 }),
    extra: fc.option(fc.constantFrom("ordinal", "flavour", "__proto__"), { nil: undefined })
  })
  .map(({ kind: [type, subtype], timestamp, body, text, extra }) => {
    const payload =
      subtype === null
        ? { output: body }
        : { type: subtype, message: text, content: [{ type: "input_text", text }], output: body, turn_id: "t1" }
    const entry: Record<string, unknown> = { ...(timestamp === undefined ? {} : { timestamp }), type, payload }
    if (extra !== undefined) Object.defineProperty(entry, extra, { value: 1, enumerable: true })
    return line(entry)
  })

/** Bytes a line may be corrupted with: JSON syntax, escapes, control characters, bad UTF-8. */
const noise = fc.constantFrom(
  0x22,
  0x5c,
  0x7b,
  0x7d,
  0x5b,
  0x5d,
  0x2c,
  0x3a,
  0x00,
  0x1f,
  0x0d,
  0x20,
  0xff,
  0xc0,
  0xed,
  0x75
)

/** A line, sometimes corrupted by one edit: replace, insert or delete a byte anywhere. */
const lineBytes = fc
  .tuple(
    fc.oneof(
      { weight: 6, arbitrary: recordLine },
      {
        weight: 1,
        arbitrary: fc.constant('{"type":"response_item","type":"event_msg","payload":{"type":"token_count"}}')
      },
      {
        weight: 1,
        arbitrary: fc.constant('{"type":"response_item","payload":{"type":"reasoning","type":"message","role":"user"}}')
      },
      { weight: 1, arbitrary: fc.constant('{"\\u0074ype":"event_msg","payload":{"\\u0074ype":"token_count"}}') },
      { weight: 1, arbitrary: fc.constant('\ufeff{"type":"event_msg","payload":{"type":"token_count"}}') },
      { weight: 1, arbitrary: fc.constant(`{"type":"event_msg","payload":${"[".repeat(300)}${"]".repeat(300)}}`) },
      { weight: 1, arbitrary: fc.constantFrom("", "   ", "\r", "[]", "42", '"x"', "{}") }
    ),
    fc.option(fc.tuple(fc.constantFrom("replace", "insert", "delete"), fc.nat(), noise), { freq: 2, nil: undefined })
  )
  .map(([text, edit]) => {
    const bytes = Array.from(encoder.encode(text))
    if (edit !== undefined && bytes.length > 0) {
      const [how, at, byte] = edit
      const i = at % bytes.length
      if (how === "replace") bytes[i] = byte
      else if (how === "insert") bytes.splice(i, 0, byte)
      else bytes.splice(i, 1)
    }
    return bytes
  })

const transcript = fc.tuple(fc.array(lineBytes, { maxLength: 12 }), fc.boolean()).map(([lines, terminated]) => {
  const out: Array<number> = []
  lines.forEach((l, i) => {
    out.push(...l)
    if (i < lines.length - 1 || terminated) out.push(0x0a)
  })
  return new Uint8Array(out)
})

describe("the importer's record source", () => {
  it("reads exactly the records the shared reader reads, cut at any read boundary", () => {
    fc.assert(
      fc.property(
        transcript,
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 8, max: 400 }),
        (bytes, chunkBytes, readLimit, maxLineBytes) => {
          const expected = viaReader(bytes, chunkBytes, maxLineBytes)
          // Without checking lines in place, record for record the same.
          expect(
            viaImporter(bytes, { chunkBytes, maxLineBytes, skimFrom: Number.POSITIVE_INFINITY, readLimit })
          ).toEqual(expected)
          // Checking every line in place: the classification is the same.
          const skimmed = viaImporter(bytes, { chunkBytes, maxLineBytes, skimFrom: 0, readLimit })
          expect(skimmed.map((r) => [r.kind, r.line, r.byte_start, r.byte_end])).toEqual(
            expected.map((r) => [r.kind, r.line, r.byte_start, r.byte_end])
          )
          expect(summaryOf(skimmed)).toEqual(summaryOf(expected))
        }
      ),
      fuzzParameters(400)
    )
  })

  it("checks a line in place exactly when JSON.parse accepts it (and its type allows it)", () => {
    let skimmed = 0
    fc.assert(
      fc.property(lineBytes, (bytes) => {
        const raw = new Uint8Array(bytes)
        const entry = skimEntry(raw, decidedByType)
        const decoded = decodeLine(
          { line: 1, byte_start: 0, byte_end: raw.length, bytes: raw, terminated: true },
          1 << 20
        )
        if (entry === undefined) return
        skimmed++
        // Whatever is checked in place is a record for the decoder too, classified the same.
        expect(decoded.kind).toBe("record")
        const asRecord = { kind: "record" as const, line: 1, byte_start: 0, byte_end: raw.length, entry }
        expect(summaryOf([asRecord])).toEqual(summaryOf([decoded]))
      }),
      fuzzParameters(2000)
    )
    expect(skimmed).toBeGreaterThan(100)
  })

  it("accepts a tool output exactly when JSON.parse does, whatever its value", () => {
    const fragments = fc.constantFrom(
      "0",
      "01",
      "-",
      "-0",
      "1.",
      ".5",
      "1.5",
      "1e",
      "1e+",
      "1E-7",
      "-12.5e3",
      "+1",
      "00",
      "true",
      "tru",
      "false",
      "null",
      "nul",
      "NaN",
      '"a"',
      '"\\"',
      '"\\u0041"',
      '"\\u12g4"',
      '"\\x"',
      '"\\/"',
      '"\t"',
      '"unterminated',
      '"\u00e9"',
      "[",
      "]",
      "{",
      "}",
      ",",
      ":",
      " ",
      "\r",
      "\t",
      '"k":',
      "[1,]",
      "{,}",
      '{"a":1}',
      '{"a" 1}',
      "[[]]"
    )
    let accepted = 0
    fc.assert(
      fc.property(fc.array(fragments, { minLength: 1, maxLength: 6 }), (parts) => {
        const value = parts.join("")
        const text = `{"type":"response_item","payload":{"type":"function_call_output","output":${value}}}`
        let parses = true
        try {
          JSON.parse(text)
        } catch {
          parses = false
        }
        const entry = skimEntry(encoder.encode(text), decidedByType)
        expect(entry !== undefined).toBe(parses)
        if (parses) accepted++
      }),
      fuzzParameters(5000)
    )
    expect(accepted).toBeGreaterThan(200)
  })

  it("hands on a tool output without its payload, and decodes a message whatever its size", () => {
    const output = "x".repeat(200_000)
    const tool = encoder.encode(
      line({
        timestamp: "2026-03-01T10:00:00.000Z",
        type: "response_item",
        payload: { type: "function_call_output", call_id: "c1", output },
        ordinal: 7
      })
    )
    expect(skimEntry(tool, decidedByType)).toEqual({
      timestamp: "2026-03-01T10:00:00.000Z",
      type: "response_item",
      payload: { type: "function_call_output" },
      ordinal: null
    })
    const message = encoder.encode(
      line({ type: "event_msg", payload: { type: "user_message", message: `please read this: ${output}` } })
    )
    expect(skimEntry(message, decidedByType)).toBeUndefined()
    // Broken the same size: left to the decoder, which says why.
    expect(skimEntry(tool.subarray(0, tool.length - 1), decidedByType)).toBeUndefined()
    const invalid = Uint8Array.from(tool)
    invalid[100] = 0xff
    expect(skimEntry(invalid, decidedByType)).toBeUndefined()
  })
})
