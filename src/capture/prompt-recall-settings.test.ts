import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { Either } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { nodeHookFs } from "../../layers/node-hook-fs.js"
import { parseConfig } from "../config/config.js"
import { PROMPT_RECALL_DEFAULTS, promptRecallSettingsOf, readPromptRecallSettings } from "./prompt-recall-settings.js"

let configHome: string
beforeEach(() => {
  configHome = Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-recall-config-"))
})
afterEach(() => Fs.rmSync(configHome, { recursive: true, force: true }))

const write = (text: string, mode = 0o600) => {
  Fs.mkdirSync(NodePath.join(configHome, "blctx"), { recursive: true })
  const path = NodePath.join(configHome, "blctx", "config.json")
  Fs.writeFileSync(path, text)
  Fs.chmodSync(path, mode)
}

describe("prompt_recall settings", () => {
  it("defaults to on, 150 ms, 3 hits, floor 0.55", () => {
    expect(readPromptRecallSettings(nodeHookFs, configHome)).toEqual({
      enabled: true,
      deadline_ms: 150,
      limit: 3,
      min_relevance: 0.55
    })
  })

  it("reads the file's section, field by field", () => {
    write('{"prompt_recall":{"enabled":false,"deadline_ms":300,"limit":5,"min_relevance":0.7}}')
    expect(readPromptRecallSettings(nodeHookFs, configHome)).toEqual({
      enabled: false,
      deadline_ms: 300,
      limit: 5,
      min_relevance: 0.7
    })
    write('{"prompt_recall":{"limit":4}}')
    expect(readPromptRecallSettings(nodeHookFs, configHome)).toEqual({ ...PROMPT_RECALL_DEFAULTS, limit: 4 })
  })

  it("falls back to the defaults on any problem with the file", () => {
    for (const text of ["{", "[]", '{"prompt_recall":7}', "null"]) {
      write(text)
      expect(readPromptRecallSettings(nodeHookFs, configHome)).toEqual(PROMPT_RECALL_DEFAULTS)
    }
    write('{"prompt_recall":{"enabled":false}}', 0o666)
    expect(readPromptRecallSettings(nodeHookFs, configHome)).toEqual(PROMPT_RECALL_DEFAULTS)
  })

  it("uses exactly the values blctx's own configuration accepts", () => {
    const values = {
      enabled: [true, false, "yes", 1, null],
      deadline_ms: [9, 10, 150, 10_000, 10_001, 100.5, "150", -1],
      limit: [0, 1, 10, 11, 2.5],
      min_relevance: [-0.1, 0, 0.55, 1, 1.01, "0.5", Number.NaN]
    }
    for (const [field, candidates] of Object.entries(values)) {
      for (const value of candidates) {
        const file = { prompt_recall: { [field]: value } }
        const acceptedByBlctx = Either.isRight(parseConfig(JSON.stringify(file), "/c.json")) && !Number.isNaN(value)
        const used = promptRecallSettingsOf(file)[field as keyof typeof PROMPT_RECALL_DEFAULTS] === value
        expect({ field, value, used }).toEqual({ field, value, used: acceptedByBlctx })
      }
    }
  })
})
