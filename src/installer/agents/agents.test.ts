import { describe, expect, it } from "vitest"
import { EVENT_ALIASES, HOOK_EVENTS } from "../../capture/hook-event.js"
import { AGENT_TARGETS, TARGET_STEP_IDS } from "../../domain/step-id.js"
import { MANIFEST_VERSION, Manifest } from "../../ownership/manifest.js"
import { TRANSCRIPT_FORMATS } from "../../transcripts/formats/registry.js"
import type { HooksRecord, McpRecord } from "./agent-integration.js"
import { AGENTS } from "./agents.js"

const manifest = () =>
  new Manifest({
    version: MANIFEST_VERSION,
    installation_id: "6f1c2a3b-4d5e-4f60-8a1b-2c3d4e5f6a7b" as Manifest["installation_id"],
    state: "active",
    owned_files: [],
    created_directories: [],
    node: "/usr/bin/node" as Manifest["node"],
    cli: "/opt/blctx/cli.js" as Manifest["cli"],
    created_at: "2026-12-03T00:00:00.000Z",
    updated_at: "2026-12-03T00:00:00.000Z"
  })

const mcp: McpRecord = {
  home: "/home/a/.x",
  name: "base-layer-context",
  command: "/usr/bin/node",
  args: ["/opt/mcp.js"]
}
const hooks: HooksRecord = {
  home: "/home/a/.x",
  file: "/home/a/.x/hooks.json",
  generation: "0b9a1a4e-8a5c-4e2a-9f0a-1c2d3e4f5a6b",
  entries: [{ event: "Stop", command: "/usr/bin/node /opt/hook.js" }]
}

describe("agent integrations", () => {
  it("each target has a record whose steps are the target's step ids and whose format is registered", () => {
    for (const target of AGENT_TARGETS) {
      const agent = AGENTS[target]
      expect(agent.target).toBe(target)
      expect([agent.steps.mcp, agent.steps.skills, agent.steps.hooks]).toEqual(TARGET_STEP_IDS[target])
      expect(TRANSCRIPT_FORMATS).toContain(agent.transcripts)
    }
  })

  it("keeps each agent's records under its own manifest key and field names, and reads them back", () => {
    const stored = new Manifest({
      ...AGENTS.claude.hooks.records.with({ ...AGENTS.codex.mcp.records.with({ ...manifest() }, [mcp]) }, [hooks])
    })
    expect(stored.codex_mcp).toEqual([{ codex_home: mcp.home, name: mcp.name, command: mcp.command, args: mcp.args }])
    expect(stored.claude_hooks).toEqual([
      { claude_home: hooks.home, settings_file: hooks.file, generation: hooks.generation, entries: hooks.entries }
    ])
    expect(stored.claude_mcp).toBeUndefined()
    expect(AGENTS.codex.mcp.records.read(stored)).toEqual([mcp])
    expect(AGENTS.claude.hooks.records.read(stored)).toEqual([hooks])
    expect(AGENTS.codex.hooks.records.read(stored)).toEqual([])
  })

  it("keeps Gemini CLI's records under gemini_* keys with gemini_home and settings_file", () => {
    const stored = new Manifest({
      ...AGENTS.gemini.hooks.records.with({ ...AGENTS.gemini.mcp.records.with({ ...manifest() }, [mcp]) }, [hooks])
    })
    expect(stored.gemini_mcp).toEqual([{ gemini_home: mcp.home, name: mcp.name, command: mcp.command, args: mcp.args }])
    expect(stored.gemini_hooks).toEqual([
      { gemini_home: hooks.home, settings_file: hooks.file, generation: hooks.generation, entries: hooks.entries }
    ])
    expect(AGENTS.gemini.mcp.records.read(stored)).toEqual([mcp])
    expect(AGENTS.gemini.hooks.records.read(stored)).toEqual([hooks])
    expect(AGENTS.claude.hooks.records.read(stored)).toEqual([])
  })

  it("names blctx's four events for each agent; Gemini's prompt and turn end are BeforeAgent and AfterAgent, in milliseconds", () => {
    for (const target of AGENT_TARGETS) expect(Object.keys(AGENTS[target].hooks.events)).toEqual([...HOOK_EVENTS])
    expect(AGENTS.codex.hooks.events.UserPromptSubmit).toEqual({ name: "UserPromptSubmit", timeout: 2 })
    expect(AGENTS.gemini.hooks.events.UserPromptSubmit).toEqual({ name: "BeforeAgent", timeout: 2_000 })
    expect(AGENTS.gemini.hooks.events.Stop).toEqual({ name: "AfterAgent", timeout: 5_000 })
    // Every name an agent's file uses is one its payloads are read under.
    for (const target of AGENT_TARGETS) {
      for (const [event, { name }] of Object.entries(AGENTS[target].hooks.events)) {
        expect(name === event || EVENT_ALIASES[name] === event, `${target} ${name}`).toBe(true)
      }
    }
  })

  it("drops an agent's key when its last record goes", () => {
    const emptied = AGENTS.codex.mcp.records.with(AGENTS.codex.mcp.records.with({ ...manifest() }, [mcp]), [])
    expect("codex_mcp" in emptied).toBe(false)
  })
})
