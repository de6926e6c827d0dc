import { describe, expect, it } from "@effect/vitest"
import type { CodexHook } from "./codex-app-server.js"
import { describeTrust, judgeHooksListing, listingProblems } from "./hooks-listing.js"

const FILE = "/c/hooks.json"
const hook = (over: Partial<CodexHook>): CodexHook => ({
  key: `${FILE}:stop:0:0`,
  eventName: "stop",
  command: "run stop",
  timeoutSec: 5,
  enabled: true,
  currentHash: "sha256:1",
  trustStatus: "untrusted",
  sourcePath: FILE,
  ...over
})
const ENTRIES = [
  { event: "SessionStart", command: "run start" },
  { event: "Stop", command: "run stop" },
  { event: "UserPromptSubmit", command: "run prompt" }
]

describe("judgeHooksListing", () => {
  it("finds entries by event (in Codex's spelling) and exact command, preferring the hooks file's own", () => {
    const judged = judgeHooksListing(
      {
        hooks: [
          hook({ eventName: "sessionStart", command: "run start", trustStatus: "trusted" }),
          hook({ sourcePath: "/project/.codex/hooks.json", trustStatus: "trusted" }),
          hook({ trustStatus: "modified" }),
          hook({ eventName: "stop", command: "run prompt" })
        ],
        warnings: [],
        errors: []
      },
      ENTRIES,
      FILE
    )
    expect(judged.trusted.map((t) => t.entry.event)).toEqual(["SessionStart"])
    expect(judged.pending.map((t) => [t.entry.event, t.hook.trustStatus])).toEqual([["Stop", "modified"]])
    // The prompt command is listed, but under another event.
    expect(judged.missing).toEqual([ENTRIES[2]])
    expect(describeTrust({ ...judged, missing: [] })).toBe(
      "approve on next Codex launch: open /hooks and trust the blctx hooks (1 of 2 trusted; waiting: Stop; Stop is modified since last approved)"
    )
  })

  it("reports disabled entries apart, and says when all are trusted", () => {
    const judged = judgeHooksListing(
      {
        hooks: [
          hook({ enabled: false }),
          hook({ eventName: "sessionStart", command: "run start", trustStatus: "trusted" })
        ],
        warnings: [],
        errors: []
      },
      ENTRIES.slice(0, 2),
      FILE
    )
    expect(judged.disabled.map((d) => d.entry.event)).toEqual(["Stop"])
    expect(describeTrust(judged)).toBe("trusted in Codex (1 of 1)")
  })

  it("keeps what Codex said about the hooks file, or everything when nothing names it", () => {
    const listing = {
      hooks: [],
      warnings: [`failed to parse hooks config ${FILE}: unknown field`],
      errors: [{ path: "/other.json", message: "bad" }]
    }
    expect(listingProblems(listing, FILE)).toEqual([`failed to parse hooks config ${FILE}: unknown field`])
    expect(listingProblems(listing, "/elsewhere.json")).toEqual(["/other.json: bad", listing.warnings[0]])
  })
})
