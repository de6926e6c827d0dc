import { describe, expect, it } from "vitest"
import { sanitizeDeep, sanitizeForTerminal, stringifyForTerminal } from "./sanitize.js"
import { hasRawTerminalControl } from "./terminal-controls.test-support.js"

const hostile = [
  "\u001b]52;c;ZXZpbA==\u0007", // OSC 52: write the clipboard
  "\u001b[2J", // clear the screen
  "\u0007", // BEL
  "\u009b31m", // single-byte CSI
  "\u202eexe.txt", // right-to-left override
  "\u2066isolate\u2069"
]

describe("sanitizeForTerminal", () => {
  it("leaves no control or bidi character, and says where each was", () => {
    for (const text of hostile) {
      const safe = sanitizeForTerminal(text)
      expect(hasRawTerminalControl(safe)).toBe(false)
      expect(safe).toContain("\\")
    }
    expect(sanitizeForTerminal("\u001b[2J")).toBe("\\x1b[2J")
    expect(sanitizeForTerminal("\u009b")).toBe("\\x9b")
    expect(sanitizeForTerminal("a\u202eb")).toBe("a\\u{202e}b")
  })

  it("keeps ordinary text, tabs, newlines and non-Latin scripts as they are, and is idempotent", () => {
    const text = "deploy\tthe rollout\nдеплой 部署 ✓ עברית"
    expect(sanitizeForTerminal(text)).toBe(text)
    const once = sanitizeForTerminal(hostile.join(""))
    expect(sanitizeForTerminal(once)).toBe(once)
  })
})

describe("sanitizeDeep", () => {
  it("reaches every string of a nested value and keeps the rest", () => {
    const value = { timestamp: "2026\u001b[2J", n: 3, nested: [{ cwd: "/x\u009b" }, null, true] }
    expect(sanitizeDeep(value)).toEqual({ timestamp: "2026\\x1b[2J", n: 3, nested: [{ cwd: "/x\\x9b" }, null, true] })
  })
})

describe("stringifyForTerminal", () => {
  it("is valid JSON with the same value and no raw control, C1 or bidi character", () => {
    const value = { text: hostile.join(" ") }
    const json = stringifyForTerminal(value)
    expect(hasRawTerminalControl(json)).toBe(false)
    expect(JSON.parse(json)).toEqual(value)
  })
})
