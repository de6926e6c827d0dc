import { describe, expect, it } from "vitest"
import { CAPTURE_AGENTS } from "../capture/capture-record.js"
import type { HooksRecord, McpRecord, SkillRecord } from "../installer/agents/agent-integration.js"
import { AGENTS } from "../installer/agents/agents.js"
import type { ManifestFields } from "../installer/agents/manifest-records.js"
import { homeField, hooksChoiceKey, hooksFileField, recordsKey } from "../ownership/manifest-keys.js"
import { KNOWN_AGENTS } from "../retrieval/known-agents.js"
import { TRANSCRIPT_FORMATS } from "../transcripts/formats/registry.js"
import { AGENT_NAMES } from "./agent-names.js"
import { STEP_IDS, TARGET_STEP_IDS } from "./step-id.js"

const HOME = "/home/a/.agent"
const mcp: McpRecord = { home: HOME, name: "base-layer-context", command: "/usr/bin/node", args: ["/opt/mcp.js"] }
const skill: SkillRecord = { home: HOME, root: `${HOME}/skills`, path: `${HOME}/skills/s`, version: "1", sha256: "ab" }
const hooks: HooksRecord = {
  home: HOME,
  file: `${HOME}/settings.json`,
  generation: "0b9a1a4e-8a5c-4e2a-9f0a-1c2d3e4f5a6b",
  entries: [{ event: "Stop", command: "/usr/bin/node /opt/hook.js" }]
}
const stored = (fields: ManifestFields, key: string) =>
  (fields as unknown as Record<string, ReadonlyArray<object>>)[key]
const NONE = {} as ManifestFields

/**
 * The plain names tuple is what the effect-free modules (the hook handler, the CLI's fast path)
 * and every derived list use; the records and formats are what the installer and importer use.
 * These fail when one gains an agent the other lacks, or names its manifest keys differently.
 */
describe("AGENT_NAMES", () => {
  it("is every installer record and every transcript format, in the same order", () => {
    expect(Object.keys(AGENTS)).toEqual([...AGENT_NAMES])
    expect(TRANSCRIPT_FORMATS.map((f) => f.agent)).toEqual([...AGENT_NAMES])
    for (const agent of AGENT_NAMES) {
      expect(AGENTS[agent].target).toBe(agent)
      expect(AGENTS[agent].transcripts.agent).toBe(agent)
      expect(AGENTS[agent].transcripts.sourceType).toBe(`${agent}_transcript`)
    }
  })

  it("is what capture, retrieval and the installer's step ids list", () => {
    expect([...CAPTURE_AGENTS]).toEqual([...AGENT_NAMES])
    expect([...KNOWN_AGENTS]).toEqual([...AGENT_NAMES])
    for (const agent of AGENT_NAMES) {
      const own = [AGENTS[agent].steps.mcp, AGENTS[agent].steps.skills, AGENTS[agent].steps.hooks]
      expect(own).toEqual(TARGET_STEP_IDS[agent])
      for (const id of own) expect(STEP_IDS).toContain(id)
    }
  })

  it("gives each record's manifest keys and field names, as the hook handler reads them", () => {
    for (const agent of AGENT_NAMES) {
      const { mcp: m, skills: s, hooks: h } = AGENTS[agent]
      expect([m.records.key, s.records.key, h.records.key]).toEqual([
        recordsKey(agent, "mcp"),
        recordsKey(agent, "skills"),
        recordsKey(agent, "hooks")
      ])
      expect(h.choice).toBe(hooksChoiceKey(agent))
      expect(Object.keys(stored(m.records.with(NONE, [mcp]), m.records.key)?.[0] ?? {})).toContain(homeField(agent))
      expect(Object.keys(stored(s.records.with(NONE, [skill]), s.records.key)?.[0] ?? {})).toContain(homeField(agent))
      const hooksFields = Object.keys(stored(h.records.with(NONE, [hooks]), h.records.key)?.[0] ?? {})
      expect(hooksFields).toContain(homeField(agent))
      expect(hooksFields).toContain(hooksFileField(agent))
    }
  })
})
