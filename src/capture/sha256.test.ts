import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import { sha256Hex } from "./sha256.js"

const reference = (text: string) => createHash("sha256").update(text).digest("hex")

describe("sha256Hex", () => {
  it("is node:crypto's SHA-256 for the empty string, the block boundaries and non-ASCII text", () => {
    expect(sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    for (const n of [1, 54, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000])
      expect(sha256Hex("x".repeat(n))).toBe(reference("x".repeat(n)))
    for (const text of ["/home/dev/.codex\u0000019a-session", "é—∑ 🎉 日本語", "/tmp/a b\u0000c"])
      expect(sha256Hex(text)).toBe(reference(text))
  })

  it("agrees with node:crypto on many random strings", () => {
    for (let i = 0; i < 300; i++) {
      const text = Array.from({ length: i }, () => String.fromCodePoint(Math.floor(Math.random() * 0x2_0000))).join("")
      expect(sha256Hex(text)).toBe(reference(text))
    }
  })
})
