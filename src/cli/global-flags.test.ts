import { describe, expect, it } from "@effect/vitest"
import { extractGlobalFlags } from "./global-flags.js"

describe("extractGlobalFlags", () => {
  it("finds --json and --no-color before the command", () => {
    expect(extractGlobalFlags(["--json", "--no-color", "status"])).toEqual({
      flags: { json: true, noColor: true },
      rest: ["status"]
    })
  })

  it("finds them after the command's arguments", () => {
    expect(extractGlobalFlags(["install", "codex", "--step", "data_directory", "--json"])).toEqual({
      flags: { json: true, noColor: false },
      rest: ["install", "codex", "--step", "data_directory"]
    })
  })

  it("leaves everything after -- alone", () => {
    expect(extractGlobalFlags(["search", "--", "--json"])).toEqual({
      flags: { json: false, noColor: false },
      rest: ["search", "--", "--json"]
    })
  })
})
