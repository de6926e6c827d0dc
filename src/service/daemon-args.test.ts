import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { DaemonArgs, daemonArgv, parseDaemonArgv } from "./daemon-args.js"

const args = DaemonArgs.make({
  "installation-id": "6f1f3c3e-8f5e-4a57-9d3b-4d1c2f0e9a11" as DaemonArgs["installation-id"],
  "data-home": "/home/a/.local/share",
  "config-home": "/home/a/.config",
  "cache-home": "/home/a/.cache",
  "state-home": "/home/a/.local/state"
})

describe("parseDaemonArgv", () => {
  it("decodes what daemonArgv writes", () => {
    expect(parseDaemonArgv(daemonArgv(args))).toEqual(Either.right(args))
  })

  it("refuses unknown, repeated, missing and relative arguments", () => {
    const argv = [...daemonArgv(args)]
    expect(Either.getLeft(parseDaemonArgv([...argv, "--verbose", "1"]))._tag).toBe("Some")
    expect(Either.getLeft(parseDaemonArgv([...argv, "--data-home", "/x"]))).toEqual(
      Either.getLeft(Either.left("--data-home given twice"))
    )
    expect(Either.isLeft(parseDaemonArgv(argv.slice(0, -2)))).toBe(true)
    expect(Either.isLeft(parseDaemonArgv(argv.map((a) => (a === "/home/a/.cache" ? "relative/cache" : a))))).toBe(true)
    expect(Either.isLeft(parseDaemonArgv(argv.map((a) => (a === args["installation-id"] ? "not-a-uuid" : a))))).toBe(
      true
    )
  })
})
