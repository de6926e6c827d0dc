import { PassThrough } from "node:stream"
import { describe, expect, it } from "@effect/vitest"
import { CLOSED_STDOUT_EXIT, endQuietlyOnClosedStdout } from "./closed-stdout.js"

const epipe = () => Object.assign(new Error("write EPIPE"), { code: "EPIPE" })

describe("a closed stdout", () => {
  it("ends the program with 141 on EPIPE, once however often it is installed", () => {
    const stream = new PassThrough()
    const exits: Array<number> = []
    endQuietlyOnClosedStdout(stream, (code) => exits.push(code))
    endQuietlyOnClosedStdout(stream, (code) => exits.push(code))
    stream.emit("error", epipe())
    expect(exits).toEqual([CLOSED_STDOUT_EXIT])
  })

  it("leaves any other write error a failure", () => {
    const stream = new PassThrough()
    endQuietlyOnClosedStdout(stream, () => undefined)
    expect(() => stream.emit("error", Object.assign(new Error("write EIO"), { code: "EIO" }))).toThrow("EIO")
  })
})
