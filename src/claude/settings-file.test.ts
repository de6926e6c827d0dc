import { Either } from "effect"
import { describe, expect, it } from "vitest"
import {
  addEntries,
  type HookEntry,
  modifiedEntries,
  parseHooksDocument,
  removeEntries,
  renderHooksDocument
} from "../codex/hooks-file.js"
import { claudeSettingsFile, hooksDisabled, managedHooksRestriction } from "./settings-file.js"

/** A Claude Code settings.json: hooks beside every other kind of setting. */
const SETTINGS = {
  $schema: "https://json.schemastore.org/claude-code-settings.json",
  model: "opus",
  permissions: { allow: ["Bash(npm run test:*)"], deny: ["Read(./.env)"], defaultMode: "acceptEdits" },
  env: { CLAUDE_CODE_ENABLE_TELEMETRY: "0" },
  hooks: {
    PostToolUse: [{ matcher: "Write|Edit", hooks: [{ type: "command", command: "npx prettier --write" }] }],
    Stop: [{ hooks: [{ type: "prompt", prompt: "Check the work is done" }] }]
  },
  enabledPlugins: { "formatter@tools": true }
}

const INSTALLATION = "6f1c8f5e-3b1a-4c2d-9e7f-0a1b2c3d4e5f"
const entries: ReadonlyArray<HookEntry> = ["SessionStart", "Stop"].map((event) => ({
  event,
  command: `/usr/bin/node /opt/blctx/dist/bin/blctx-hook.mjs ${event} --installation-id ${INSTALLATION} --generation g`
}))

describe("Claude Code settings.json through the shared hooks-file logic", () => {
  it("names the file in the claude home", () => {
    expect(claudeSettingsFile("/home/a/.claude/")).toBe("/home/a/.claude/settings.json")
  })

  it("adds and removes blctx's entries, keeping every other setting and hook exactly, key order included", () => {
    const original = renderHooksDocument(SETTINGS)
    const parsed = parseHooksDocument(original, "Claude Code")
    if (Either.isLeft(parsed)) throw new Error(parsed.left)
    const added = addEntries(parsed.right, entries, () => 5)
    expect(Object.keys(added)).toEqual(Object.keys(SETTINGS))
    expect(added.hooks?.PostToolUse).toEqual(SETTINGS.hooks.PostToolUse)
    expect(added.hooks?.Stop).toEqual([
      ...SETTINGS.hooks.Stop,
      { hooks: [{ type: "command", command: entries[1]?.command, timeout: 5 }] }
    ])
    expect(renderHooksDocument(removeEntries(added, entries))).toBe(
      renderHooksDocument({ ...SETTINGS, hooks: { ...SETTINGS.hooks } })
    )
  })

  it("finds a blctx command someone changed", () => {
    const parsed = parseHooksDocument(renderHooksDocument(SETTINGS))
    if (Either.isLeft(parsed)) throw new Error(parsed.left)
    const added = addEntries(parsed.right, entries, () => 5)
    const changed = JSON.parse(
      JSON.stringify(added).replace("SessionStart --installation-id", "SessionStart -x --installation-id")
    )
    expect(modifiedEntries(changed, entries, INSTALLATION).map((m) => m.event)).toEqual(["SessionStart"])
  })

  it("says what is wrong with a malformed settings.json, naming Claude Code", () => {
    expect(Either.getLeft(parseHooksDocument("{", "Claude Code"))._tag).toBe("Some")
    const wrong = parseHooksDocument(JSON.stringify({ hooks: { Stop: "x" } }), "Claude Code")
    expect(Either.isLeft(wrong) && wrong.left).toMatch(/^hooks\.Stop /)
    expect(Either.isLeft(parseHooksDocument("[]", "Claude Code"))).toBe(true)
  })

  it("sees hooks turned off, in user settings and in managed settings", () => {
    expect(hooksDisabled({ disableAllHooks: true })).toBe(true)
    expect(hooksDisabled({ disableAllHooks: false })).toBe(false)
    expect(hooksDisabled(SETTINGS)).toBe(false)
    expect(managedHooksRestriction('{"disableAllHooks": true}')).toBe("disableAllHooks")
    expect(managedHooksRestriction('{"allowManagedHooksOnly": true}')).toBe("allowManagedHooksOnly")
    expect(managedHooksRestriction('{"allowManagedHooksOnly": false}')).toBeUndefined()
    expect(managedHooksRestriction("not json")).toBeUndefined()
    expect(managedHooksRestriction("null")).toBeUndefined()
  })
})
