import { describe, expect, it } from "@effect/vitest"
import { stringifyForTerminal } from "./terminal-json.js"

describe("stringifyForTerminal", () => {
  it("escapes C0, DEL and C1 controls and still round-trips the exact text", () => {
    const text = "esc \u001b[2J bell \u0007 del \u007f csi \u009b nel \u0085 tab\tnewline\n ünïcødé 😀"
    const json = stringifyForTerminal({ text })
    for (const ch of json) {
      const code = ch.charCodeAt(0)
      expect((code < 0x20 && code !== 0x0a && code !== 0x20) || (code >= 0x7f && code <= 0x9f)).toBe(false)
    }
    expect(json).toContain("\\u009b")
    expect(JSON.parse(json)).toEqual({ text })
  })
})
