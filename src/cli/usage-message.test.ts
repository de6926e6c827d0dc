import { describe, expect, it } from "@effect/vitest"
import { commandNames } from "./help.js"
import { subcommands } from "./root.js"
import { usageMessage } from "./usage-message.js"

const descriptors = subcommands.map((c) => c.descriptor)
const names = commandNames(descriptors)
const reword = (text: string, args: ReadonlyArray<string>) => usageMessage(text, { args, names, descriptors })

describe("usage errors @effect/cli words, reworded", () => {
  it("names the argument a choice was wrong for, and what was given", () => {
    expect(reword("Expected one of the following cases: codex, claude", ["install", "bogus"])).toBe(
      'install <target> must be one of codex, claude (got "bogus")'
    )
    expect(reword("Expected one of the following cases: codex, claude", ["status", "--step", "x", "bogus"])).toBe(
      'status <target> must be one of codex, claude (got "bogus")'
    )
  })

  it("names the command a missing or extra argument is for", () => {
    expect(reword("Missing argument <context-id>", ["context"])).toBe("context needs <context-id>")
    expect(reword("Missing argument <target> with choices codex | claude", ["install"])).toBe(
      "install needs <target> (codex, claude)"
    )
    expect(reword("Expected a value following option: '--step'", ["status", "--step"])).toBe("--step needs a value")
    expect(reword("Received unknown argument: 'extra'", ["install", "codex", "extra"])).toBe(
      'install does not take "extra"; blctx install --help lists what it takes'
    )
  })

  it("says which command is unknown, not `Invalid subcommand for blctx`", () => {
    expect(reword("Invalid subcommand for blctx - use one of 'install', 'status'", ["notes", "bogus"])).toBe(
      'unknown notes command "bogus"; blctx notes --help lists them'
    )
  })

  it("keeps a message it has no rule for", () => {
    expect(reword("--limit must be between 1 and 100 (got 0)", ["search", "x"])).toBe(
      "--limit must be between 1 and 100 (got 0)"
    )
  })
})
