import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import toml from "toml"
import { hookCommandLine } from "../capture/hook-command.js"
import {
  addEntries,
  commandHandlers,
  HOOK_TIMEOUTS,
  type HookEntry,
  type HooksDocument,
  hasEntry,
  inlineHookEvents,
  modifiedEntries,
  parseHooksDocument,
  removeEntries,
  renderHooksDocument,
  shellWords
} from "./hooks-file.js"

const ID = "6f1c8f5e-3b1a-4c2d-9e7f-0a1b2c3d4e5f"
const GEN = "0b7d3c55-8a61-4f0e-9a41-5e2c0d7f9a10"
const HANDLER = "/opt/my tools/blctx/dist/bin/blctx-hook.mjs"

const commandOf = (event: "SessionStart" | "Stop", generation = GEN) =>
  hookCommandLine("/usr/bin/node", HANDLER, {
    event,
    installationId: ID,
    generation,
    dataHome: "/h/.local/share",
    configHome: "/h/.config",
    cacheHome: "/h/.cache",
    stateHome: "/h/.local/state"
  })

const OURS: ReadonlyArray<HookEntry> = [
  { event: "SessionStart", command: commandOf("SessionStart") },
  { event: "Stop", command: commandOf("Stop") }
]

/** A person's file: a description, a matcher, extra fields, two events. */
const THEIRS = `{
  "description": "my hooks",
  "hooks": {
    "Stop": [
      {
        "matcher": "",
        "hooks": [
          { "type": "command", "command": "notify-send done", "timeout": 7, "statusMessage": "notifying" }
        ]
      }
    ],
    "PreToolUse": [
      { "matcher": "Bash", "hooks": [{ "type": "command", "command": "./check.sh" }] }
    ]
  }
}`

const parsed = (text: string): HooksDocument => Either.getOrThrow(parseHooksDocument(text))
const timeoutOf = (event: string) => HOOK_TIMEOUTS[event as keyof typeof HOOK_TIMEOUTS] ?? 5

describe("parseHooksDocument", () => {
  it("reads a person's file and keeps it exactly, key order included", () => {
    const doc = parsed(THEIRS)
    expect(renderHooksDocument(doc)).toBe(`${JSON.stringify(JSON.parse(THEIRS), null, 2)}\n`)
    expect(Object.keys(doc)).toEqual(["description", "hooks"])
  })

  it("says what is wrong with a file Codex could not read", () => {
    expect(parseHooksDocument("{ not json")).toEqual(Either.left(expect.stringMatching(/^it is not valid JSON \(/)))
    expect(parseHooksDocument("[]")).toEqual(Either.left("the document must be a JSON object"))
    expect(parseHooksDocument(`{"hooks": {"Stop": 3}}`)).toEqual(
      Either.left("hooks.Stop must be an array of hook groups")
    )
    expect(parseHooksDocument(`{"hooks": {"Stop": [{"hooks": [{"command": 3}]}]}}`)).toEqual(
      Either.left("hooks.Stop[0].hooks[0].command must be a string")
    )
    expect(parseHooksDocument(`{"hooks": null}`)).toEqual(
      Either.left("hooks must be an object mapping event names to arrays of hook groups")
    )
  })
})

describe("adding and removing blctx's entries", () => {
  it("appends one group per event with blctx's timeout, after the person's groups, and removes exactly those", () => {
    const before = parsed(THEIRS)
    const added = addEntries(before, OURS, timeoutOf)
    expect(added.hooks?.Stop).toEqual([
      ...(before.hooks?.Stop ?? []),
      { hooks: [{ type: "command", command: commandOf("Stop"), timeout: 5 }] }
    ])
    expect(added.hooks?.SessionStart).toEqual([
      { hooks: [{ type: "command", command: commandOf("SessionStart"), timeout: 5 }] }
    ])
    expect(added.hooks?.PreToolUse).toEqual(before.hooks?.PreToolUse)
    expect(OURS.every((e) => hasEntry(added, e))).toBe(true)
    // Adding again changes nothing.
    expect(addEntries(added, OURS, timeoutOf)).toEqual(added)

    // Removing gives back the person's file, byte for byte as rendered.
    expect(renderHooksDocument(removeEntries(added, OURS))).toBe(renderHooksDocument(before))
  })

  it("keeps a handler a person added to blctx's group, and groups and events that were empty before", () => {
    const doc: HooksDocument = {
      hooks: {
        SessionStart: [
          {
            hooks: [
              { type: "command", command: commandOf("SessionStart") },
              { type: "command", command: "echo hi" }
            ]
          }
        ],
        Stop: [{ hooks: [{ type: "command", command: commandOf("Stop") }] }, { hooks: [] }],
        SessionEnd: []
      }
    }
    expect(removeEntries(doc, OURS)).toEqual({
      hooks: {
        SessionStart: [{ hooks: [{ type: "command", command: "echo hi" }] }],
        Stop: [{ hooks: [] }],
        SessionEnd: []
      }
    })
  })

  it("matches by event and exact command: the same command under another event is not blctx's entry", () => {
    const moved: HooksDocument = {
      hooks: { Stop: [{ hooks: [{ type: "command", command: commandOf("SessionStart") }] }] }
    }
    expect(hasEntry(moved, { event: "SessionStart", command: commandOf("SessionStart") })).toBe(false)
    expect(removeEntries(moved, OURS)).toEqual(moved)
    expect(commandHandlers(moved)).toEqual([
      { event: "Stop", group: 0, handler: 0, command: commandOf("SessionStart") }
    ])
  })
})

describe("modifiedEntries", () => {
  it("finds a handler that runs blctx's hook program for this installation but is not an owned command", () => {
    const edited = `${commandOf("SessionStart")} --verbose`
    const other = commandOf("Stop", "11111111-2222-4333-8444-555555555555")
    const doc: HooksDocument = {
      hooks: {
        SessionStart: [{ hooks: [{ type: "command", command: edited }] }],
        Stop: [{ hooks: [{ type: "command", command: commandOf("Stop") }] }],
        UserPromptSubmit: [{ hooks: [{ type: "command", command: other }] }],
        SessionEnd: [{ hooks: [{ type: "command", command: `/usr/bin/node ${HANDLER} SessionEnd` }] }]
      }
    }
    // The SessionEnd handler names no installation, so it is someone else's.
    expect(modifiedEntries(doc, OURS, ID)).toEqual([
      { event: "SessionStart", command: edited },
      { event: "UserPromptSubmit", command: other }
    ])
    expect(modifiedEntries(doc, [], ID)).toEqual([])
  })

  it("reads the handler back out of a recorded command, quoting included", () => {
    expect(shellWords(commandOf("Stop")).slice(0, 3)).toEqual(["/usr/bin/node", HANDLER, "Stop"])
    expect(shellWords(`a 'it'\\''s' b\\ c`)).toEqual(["a", "it's", "b c"])
  })
})

describe("inlineHookEvents", () => {
  it("names hook definitions in config.toml, never the trust state", () => {
    const inline = toml.parse(
      `[[hooks.SessionStart]]\n[[hooks.SessionStart.hooks]]\ntype = "command"\ncommand = "x"\n[hooks.state."/c/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:1"\n`
    )
    expect(inlineHookEvents(inline)).toEqual(["SessionStart"])
    const trustOnly = toml.parse(`model = "m"\n[hooks.state."/c/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:1"\n`)
    expect(inlineHookEvents(trustOnly)).toEqual([])
    expect(inlineHookEvents({})).toEqual([])
  })
})
