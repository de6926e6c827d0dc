import { PassThrough } from "node:stream"
import { describe, expect, it } from "@effect/vitest"
import { claimStdout } from "./stdout-guard.js"

const collect = (stream: PassThrough) => {
  const chunks: Array<string> = []
  stream.on("data", (d: Buffer) => chunks.push(d.toString("utf8")))
  return chunks
}

describe("claimStdout", () => {
  it("keeps stdout for the protocol writer and sends every other write to stderr", async () => {
    const stdout = new PassThrough()
    const stderr = new PassThrough()
    const out = collect(stdout)
    const err = collect(stderr)
    const protocol = claimStdout({
      stdout: stdout as unknown as NodeJS.WriteStream,
      stderr: stderr as unknown as NodeJS.WriteStream
    })
    stdout.write("stray log line\n")
    const console = new globalThis.console.Console({ stdout: stdout as unknown as NodeJS.WriteStream })
    console.log("console.log from a library")
    await new Promise<void>((resolve) => protocol.write('{"jsonrpc":"2.0","id":1,"result":{}}\n', () => resolve()))
    expect(out.join("")).toBe('{"jsonrpc":"2.0","id":1,"result":{}}\n')
    expect(err.join("")).toBe("stray log line\nconsole.log from a library\n")
  })
})
