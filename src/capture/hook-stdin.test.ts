import { PassThrough } from "node:stream"
import { describe, expect, it } from "vitest"
import { isWholeJsonObject, readBoundedInput } from "./hook-stdin.js"

describe("readBoundedInput", () => {
  it("gathers every chunk until the end", async () => {
    const input = new PassThrough()
    const result = readBoundedInput(input, { maxBytes: 100, deadlineMs: 10_000 })
    input.write('{"a":')
    input.end("1}")
    expect(await result).toEqual({ ok: true, bytes: Buffer.from('{"a":1}') })
  })

  it("stops reading as soon as the input passes the cap", async () => {
    const input = new PassThrough()
    const result = readBoundedInput(input, { maxBytes: 10, deadlineMs: 10_000 })
    input.write("0123456789")
    input.write("x")
    expect(await result).toEqual({ ok: false, reason: "payload_too_large" })
    expect(input.destroyed).toBe(true)
  })

  it("gives up on an input that does not end in time", async () => {
    const input = new PassThrough()
    input.write("{")
    expect(await readBoundedInput(input, { maxBytes: 10, deadlineMs: 50 })).toEqual({
      ok: false,
      reason: "stdin_timeout"
    })
  })

  it("an input that fails reads as empty", async () => {
    const input = new PassThrough()
    const result = readBoundedInput(input, { maxBytes: 10, deadlineMs: 10_000 })
    input.destroy(new Error("EIO"))
    expect(await result).toEqual({ ok: true, bytes: Buffer.alloc(0) })
  })
})

describe("a caller that keeps stdin open", () => {
  it("is answered as soon as one whole JSON object has arrived", async () => {
    const input = new PassThrough()
    const result = readBoundedInput(input, { maxBytes: 100, deadlineMs: 60_000 })
    input.write('{"a":"}"')
    input.write("}\n")
    expect(await result).toEqual({ ok: true, bytes: Buffer.from('{"a":"}"}\n') })
  })

  it("isWholeJsonObject", () => {
    expect(isWholeJsonObject(Buffer.from('{"a":1} \n'))).toBe(true)
    expect(isWholeJsonObject(Buffer.from('{"a":{}'))).toBe(false)
    expect(isWholeJsonObject(Buffer.from("[1]"))).toBe(false)
  })
})
