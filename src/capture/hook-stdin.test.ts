import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { PassThrough } from "node:stream"
import { describe, expect, it } from "vitest"
import { isWholeJsonObject, readBoundedFd, readBoundedInput } from "./hook-stdin.js"

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

describe("readBoundedFd: stdin read from its descriptor", () => {
  const withFifo = async (use: (fifo: string) => Promise<void>) => {
    const dir = Fs.mkdtempSync(NodePath.join(tmpdir(), "bstdin-"))
    const fifo = NodePath.join(dir, "in")
    execFileSync("mkfifo", [fifo])
    try {
      await use(fifo)
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  }

  it("gathers everything until the end of a file", async () => {
    const dir = Fs.mkdtempSync(NodePath.join(tmpdir(), "bstdin-"))
    const path = NodePath.join(dir, "payload.json")
    Fs.writeFileSync(path, '{"a": 1}\n')
    const fd = Fs.openSync(path, "r")
    try {
      expect(await readBoundedFd(fd, { maxBytes: 100, deadlineMs: 10_000 })).toEqual({
        ok: true,
        bytes: Buffer.from('{"a": 1}\n')
      })
      const big = Fs.openSync(path, "r")
      expect(await readBoundedFd(big, { maxBytes: 4, deadlineMs: 10_000 })).toEqual({
        ok: false,
        reason: "payload_too_large"
      })
      Fs.closeSync(big)
    } finally {
      Fs.closeSync(fd)
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("answers as soon as one whole object arrived on a pipe the caller keeps open, and gives up at the deadline", async () => {
    await withFifo(async (fifo) => {
      // Opened for reading and writing, the pipe never ends: only the object (or the deadline) can.
      const fd = Fs.openSync(fifo, "r+")
      try {
        const pending = readBoundedFd(fd, { maxBytes: 100, deadlineMs: 60_000 })
        Fs.writeSync(fd, '{"a":"}"')
        Fs.writeSync(fd, "}\n")
        expect(await pending).toEqual({ ok: true, bytes: Buffer.from('{"a":"}"}\n') })
        expect(await readBoundedFd(fd, { maxBytes: 100, deadlineMs: 50 })).toEqual({
          ok: false,
          reason: "stdin_timeout"
        })
        // The read left behind takes this and ends, so nothing is blocked when the test ends.
        Fs.writeSync(fd, "x")
      } finally {
        Fs.closeSync(fd)
      }
    })
  })

  it("a descriptor that cannot be read reads as empty", async () => {
    expect(await readBoundedFd(987_654, { maxBytes: 10, deadlineMs: 10_000 })).toEqual({
      ok: true,
      bytes: Buffer.alloc(0)
    })
  })
})
