import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import * as fc from "fast-check"
import { NodeTranscriptFilesLive } from "../../layers/node-transcript-files.js"
import { fuzzParameters } from "../fuzz.test-support.js"
import { decodeLine, isBlank } from "./decode-line.js"
import { LineSplitter } from "./line-splitter.js"
import { forEachRecord, openTranscript, readAllRecords } from "./reader.js"
import type { TranscriptRecord } from "./record.js"

let dir: string
beforeEach(() => {
  dir = Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-reader-"))
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

const write = (name: string, content: string | Uint8Array) => {
  const path = NodePath.join(dir, name)
  Fs.writeFileSync(path, content)
  return path
}

const read = (path: string, options?: Parameters<typeof readAllRecords>[1]) =>
  readAllRecords(path, options).pipe(Effect.provide(NodeTranscriptFilesLive))

/** What `dd if=FILE bs=1 skip=byte_start count=byte_end-byte_start` would print. */
const slice = (path: string, r: TranscriptRecord) =>
  Fs.readFileSync(path).subarray(r.byte_start, r.byte_end).toString("utf8")

const line = (value: unknown) => JSON.stringify(value)

describe("transcript reader", () => {
  it.effect("records carry 1-based lines and exact byte ranges, multi-byte text included", () =>
    Effect.gen(function* () {
      const lines = [
        line({ timestamp: "t1", type: "session_meta", payload: { id: "s" } }),
        line({ timestamp: "t2", type: "event_msg", payload: { type: "user_message", message: "héllo ✓ 😀" } }),
        line({ timestamp: "t3", type: "response_item", payload: { type: "message", role: "user", content: [] } })
      ]
      const path = write("a.jsonl", `${lines.join("\n")}\n`)
      const { records, size } = yield* read(path, { chunkBytes: 7 })
      expect(size).toBe(Fs.statSync(path).size)
      expect(records.map((r) => r.line)).toEqual([1, 2, 3])
      let expectedStart = 0
      for (const [i, r] of records.entries()) {
        expect(r.kind).toBe("record")
        expect(r.byte_start).toBe(expectedStart)
        expect(r.byte_end).toBe(expectedStart + Buffer.byteLength(lines[i] ?? ""))
        expect(slice(path, r)).toBe(lines[i])
        expectedStart = r.byte_end + 1
      }
      const second = records[1]
      expect(second?.kind === "record" && second.entry.payload).toEqual({ type: "user_message", message: "héllo ✓ 😀" })
    })
  )

  it.effect("keeps unknown types and fields, and reports every kind of bad line without stopping", () =>
    Effect.gen(function* () {
      const good = line({ type: "world_state", ordinal: 7, payload: { full: true }, extra: [1] })
      const invalidUtf8 = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0xff, 0xfe, 0x7d])
      const parts = [
        Buffer.from(`${good}\n`),
        Buffer.from("{not json\n"),
        Buffer.concat([invalidUtf8, Buffer.from("\n")]),
        Buffer.from("[1,2,3]\n"),
        Buffer.from("\n   \n"),
        Buffer.from(`${line({ type: "event_msg", payload: {} })}\r\n`),
        Buffer.from('{"type":"event_msg","payload":{"type":"agent_mess')
      ]
      const path = write("bad.jsonl", Buffer.concat(parts))
      const { records } = yield* read(path)
      expect(records.map((r) => (r.kind === "record" ? `${r.line}:ok` : `${r.line}:${r.reason}`))).toEqual([
        "1:ok",
        "2:invalid_json",
        "3:invalid_utf8",
        "4:not_a_record",
        "7:ok",
        "8:truncated_line"
      ])
      const first = records[0]
      expect(first?.kind === "record" && first.entry).toEqual({
        type: "world_state",
        ordinal: 7,
        payload: { full: true },
        extra: [1]
      })
      const last = records[5]
      expect(last?.byte_end).toBe(Fs.statSync(path).size)
      expect(last === undefined ? "" : slice(path, last)).toBe('{"type":"event_msg","payload":{"type":"agent_mess')
      const crlf = records[4]
      expect(crlf === undefined ? "" : slice(path, crlf)).toBe(`${line({ type: "event_msg", payload: {} })}\r`)
    })
  )

  it.effect("reads a line longer than 1 MB whole, and skips one over the limit with its exact position", () =>
    Effect.gen(function* () {
      const big = "x".repeat(1_500_000)
      const bigLine = line({ type: "response_item", payload: { type: "function_call_output", output: big } })
      const after = line({ type: "event_msg", payload: { type: "agent_message", message: "done" } })
      const path = write("big.jsonl", `${bigLine}\n${after}\n`)
      const whole = yield* read(path, { chunkBytes: 64 * 1024 })
      expect(whole.records).toHaveLength(2)
      const first = whole.records[0]
      expect(first?.kind).toBe("record")
      expect(first?.byte_end).toBe(Buffer.byteLength(bigLine))
      const limited = yield* read(path, { chunkBytes: 64 * 1024, maxLineBytes: 1024 * 1024 })
      expect(limited.records.map((r) => (r.kind === "record" ? "ok" : r.reason))).toEqual(["line_too_long", "ok"])
      const next = limited.records[1]
      expect(next?.byte_start).toBe(Buffer.byteLength(bigLine) + 1)
      expect(next === undefined ? "" : slice(path, next)).toBe(after)
    })
  )

  it.effect("a 50 MB single line is a line_too_long record at the default limit, and reading goes on", () =>
    Effect.gen(function* () {
      const path = NodePath.join(dir, "huge.jsonl")
      const fd = Fs.openSync(path, "w")
      const block = Buffer.alloc(1024 * 1024, 0x61)
      Fs.writeSync(fd, '{"type":"response_item","payload":{"output":"')
      for (let i = 0; i < 50; i++) Fs.writeSync(fd, block)
      Fs.writeSync(fd, '"}}\n{"type":"event_msg","payload":{"type":"agent_message","message":"after"}}\n')
      Fs.closeSync(fd)
      const hugeEnd =
        Fs.statSync(path).size -
        Buffer.byteLength('{"type":"event_msg","payload":{"type":"agent_message","message":"after"}}\n') -
        1
      const { records } = yield* read(path)
      expect(records.map((r) => (r.kind === "record" ? "ok" : r.reason))).toEqual(["line_too_long", "ok"])
      expect(records[0]).toMatchObject({ line: 1, byte_start: 0, byte_end: hugeEnd })
      expect(records[1]).toMatchObject({ line: 2, byte_start: hugeEnd + 1 })
    })
  )

  it.scoped("reads a file growing while it is read only up to the size captured at open", () =>
    Effect.gen(function* () {
      const first = line({ type: "event_msg", payload: { type: "user_message", message: "one" } })
      const second = line({ type: "event_msg", payload: { type: "agent_message", message: "two" } })
      const path = write("growing.jsonl", `${first}\n${second.slice(0, 20)}`)
      const opened = yield* openTranscript(path, { chunkBytes: 8 })
      const capturedSize = Fs.statSync(path).size
      expect(opened.size).toBe(capturedSize)
      // The writer finishes the line and appends more while the reader is mid-stream.
      const records = yield* opened.records.pipe(
        Stream.tap((r) =>
          Effect.sync(() => {
            if (r.line === 1) Fs.appendFileSync(path, `${second.slice(20)}\n${first}\n`)
          })
        ),
        Stream.runCollect,
        Effect.map(Chunk.toReadonlyArray)
      )
      expect(records.map((r) => (r.kind === "record" ? "ok" : r.reason))).toEqual(["ok", "truncated_line"])
      expect(records[1]?.byte_end).toBe(capturedSize)
      // Opening again sees the finished line and what came after it.
      const again = yield* read(path)
      expect(again.records.map((r) => (r.kind === "record" ? "ok" : r.reason))).toEqual(["ok", "ok", "ok"])
      expect(again.records[1]?.byte_start).toBe(Buffer.byteLength(first) + 1)
    }).pipe(Effect.provide(NodeTranscriptFilesLive))
  )

  it.effect("resumes at a checkpoint with the same lines and positions as a full read", () =>
    Effect.gen(function* () {
      const lines = [1, 2, 3, 4].map((n) =>
        line({ type: "event_msg", payload: { type: "user_message", message: `m${n}` } })
      )
      const path = write("resume.jsonl", `${lines.join("\n")}\n`)
      const full = yield* read(path)
      const second = full.records[1]
      if (second === undefined) throw new Error("expected a second record")
      const resumed = yield* read(path, { from: { byte: second.byte_end + 1, line: second.line + 1 }, chunkBytes: 5 })
      expect(resumed.records).toEqual(full.records.slice(2))
    })
  )

  it.effect("an empty file has no records; a directory or missing path is a typed error naming the path", () =>
    Effect.gen(function* () {
      const empty = yield* read(write("empty.jsonl", ""))
      expect(empty.records).toEqual([])
      const missing = yield* Effect.flip(read(NodePath.join(dir, "nope.jsonl")))
      expect(missing.code).toBe("ENOENT")
      expect(missing.path).toBe(NodePath.join(dir, "nope.jsonl"))
      expect(missing.remediation).toContain("does not exist")
      const directory = yield* Effect.flip(read(dir))
      expect(directory.code).toBe("EISDIR")
    })
  )
})

describe("forEachRecord", () => {
  it.effect("visits every record in order and passes a read failure through", () =>
    Effect.gen(function* () {
      const rec = (line: number): TranscriptRecord => ({
        kind: "parse_error",
        line,
        byte_start: line,
        byte_end: line,
        reason: "invalid_json",
        message: "x"
      })
      const seen: Array<number> = []
      yield* forEachRecord(Stream.fromIterable([rec(1), rec(2), rec(3)]).pipe(Stream.rechunk(2)), (r) => {
        seen.push(r.line)
      })
      expect(seen).toEqual([1, 2, 3])
      const failing = Stream.concat(Stream.make(rec(1)), Stream.fail("disk gone"))
      const error = yield* Effect.flip(forEachRecord(failing, () => undefined))
      expect(error).toBe("disk gone")
    })
  )
})

describe("reader properties", () => {
  const decodeAll = (bytes: Uint8Array, cuts: ReadonlyArray<number>, max: number) => {
    const splitter = new LineSplitter(max)
    const out: Array<TranscriptRecord> = []
    let at = 0
    for (const cut of [...cuts, bytes.length].sort((a, b) => a - b)) {
      const end = Math.min(bytes.length, Math.max(at, cut))
      for (const raw of splitter.push(bytes.subarray(at, end))) if (!isBlank(raw.bytes)) out.push(decodeLine(raw, max))
      at = end
    }
    for (const raw of splitter.end()) if (!isBlank(raw.bytes)) out.push(decodeLine(raw, max))
    return out
  }

  const bytesArb = fc.oneof(
    fc.uint8Array({ maxLength: 400 }),
    fc
      .array(
        fc.oneof(
          fc.jsonValue().map((v) => JSON.stringify(v)),
          fc.string(),
          fc.constant('{"type":"event_msg","payload":{"type":"user_message","message":"x"}}')
        ),
        { maxLength: 12 }
      )
      .map((ls) => new TextEncoder().encode(ls.join("\n")))
  )

  it("never throws on arbitrary bytes, however the reads are cut, and positions tile the input", () => {
    fc.assert(
      fc.property(
        bytesArb,
        fc.array(fc.nat({ max: 400 }), { maxLength: 6 }),
        fc.integer({ min: 1, max: 64 }),
        (bytes, cuts, max) => {
          const records = decodeAll(bytes, cuts, max)
          let previousEnd = -1
          for (const r of records) {
            expect(r.byte_start).toBeGreaterThan(previousEnd)
            expect(r.byte_end).toBeGreaterThanOrEqual(r.byte_start)
            expect(r.byte_end).toBeLessThanOrEqual(bytes.length)
            // A record's range never contains a newline, and is followed by one unless it is the tail.
            expect(bytes.subarray(r.byte_start, r.byte_end).includes(0x0a)).toBe(false)
            if (r.byte_end < bytes.length) expect(bytes[r.byte_end]).toBe(0x0a)
            previousEnd = r.byte_end
          }
          // Cutting the reads differently never changes the result.
          expect(decodeAll(bytes, [], max)).toEqual(records)
        }
      ),
      fuzzParameters(500)
    )
  })

  it.effect("the file reader, reading in tiny reused buffers, agrees with splitting in memory", () =>
    Effect.gen(function* () {
      const samples = fc.sample(bytesArb, 80)
      for (const [i, bytes] of samples.entries()) {
        const path = write(`random-${i}.jsonl`, bytes)
        const { records } = yield* read(path, { chunkBytes: 1 + (i % 17), maxLineBytes: 256 })
        // The reused read buffer never leaks one read's bytes into another line.
        expect(records).toEqual(decodeAll(bytes, [], 256))
      }
    })
  )
})
