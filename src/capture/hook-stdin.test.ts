import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import { readFromFd } from "../../layers/node-hook-fs.js"
import type { ReadChunk } from "./hook-fs.js"
import { isWholeJsonObject, readBoundedInput } from "./hook-stdin.js"

/**
 * A stdin that answers each read with the next step: bytes, the end, an error, or nothing ever
 * (a pipe held open); `reads` counts the reads asked for.
 */
const scripted = (...steps: ReadonlyArray<string | "END" | "HANG" | Error>) => {
  const state = { reads: 0 }
  const read: ReadChunk = (buffer, done) => {
    const step = steps[state.reads++] ?? "HANG"
    if (step === "HANG") return
    setImmediate(() => {
      if (step instanceof Error) return done(Object.assign(step, { code: "EIO" }), 0)
      if (step === "END") return done(null, 0)
      done(null, Buffer.from(step).copy(buffer))
    })
  }
  return { read, state }
}

describe("readBoundedInput", () => {
  it("gathers every chunk until the end", async () => {
    const input = scripted('{"a":', "1}", "END")
    expect(await readBoundedInput(input.read, { maxBytes: 100, deadlineMs: 10_000 })).toEqual({
      ok: true,
      bytes: Buffer.from('{"a":1}')
    })
  })

  it("stops reading as soon as the input passes the cap", async () => {
    const input = scripted("0123456789", "x", "more")
    expect(await readBoundedInput(input.read, { maxBytes: 10, deadlineMs: 10_000 })).toEqual({
      ok: false,
      reason: "payload_too_large"
    })
    expect(input.state.reads).toBe(2)
  })

  it("gives up on an input that does not end in time", async () => {
    expect(await readBoundedInput(scripted("{").read, { maxBytes: 10, deadlineMs: 50 })).toEqual({
      ok: false,
      reason: "stdin_timeout"
    })
  })

  it("an input that fails reads as empty", async () => {
    expect(await readBoundedInput(scripted(new Error("EIO")).read, { maxBytes: 10, deadlineMs: 10_000 })).toEqual({
      ok: true,
      bytes: Buffer.alloc(0)
    })
  })
})

describe("a caller that keeps stdin open", () => {
  it("is answered as soon as one whole JSON object has arrived", async () => {
    const input = scripted('{"a":"}"', "}\n")
    expect(await readBoundedInput(input.read, { maxBytes: 100, deadlineMs: 60_000 })).toEqual({
      ok: true,
      bytes: Buffer.from('{"a":"}"}\n')
    })
  })

  it("isWholeJsonObject", () => {
    expect(isWholeJsonObject(Buffer.from('{"a":1} \n'))).toBe(true)
    expect(isWholeJsonObject(Buffer.from('{"a":{}'))).toBe(false)
    expect(isWholeJsonObject(Buffer.from("[1]"))).toBe(false)
  })
})

describe("stdin read from its descriptor (layers/node-hook-fs.ts)", () => {
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
      expect(await readBoundedInput(readFromFd(fd), { maxBytes: 100, deadlineMs: 10_000 })).toEqual({
        ok: true,
        bytes: Buffer.from('{"a": 1}\n')
      })
      const big = Fs.openSync(path, "r")
      expect(await readBoundedInput(readFromFd(big), { maxBytes: 4, deadlineMs: 10_000 })).toEqual({
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
        const pending = readBoundedInput(readFromFd(fd), { maxBytes: 100, deadlineMs: 60_000 })
        Fs.writeSync(fd, '{"a":"}"')
        Fs.writeSync(fd, "}\n")
        expect(await pending).toEqual({ ok: true, bytes: Buffer.from('{"a":"}"}\n') })
        expect(await readBoundedInput(readFromFd(fd), { maxBytes: 100, deadlineMs: 50 })).toEqual({
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
    expect(await readBoundedInput(readFromFd(987_654), { maxBytes: 10, deadlineMs: 10_000 })).toEqual({
      ok: true,
      bytes: Buffer.alloc(0)
    })
  })
})
