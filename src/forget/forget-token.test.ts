import { describe, expect, it } from "@effect/vitest"
import { FORGET_TOKEN_LIFETIME_MS } from "./forget-contract.js"
import { makeTokenIssuer } from "./forget-token.js"

describe("forget tokens", () => {
  const selector = JSON.stringify({ session: "s-1" })
  const issuedAt = 1_800_000_000_000

  it("confirm the selector and ids they were issued for, within ten minutes", () => {
    const issuer = makeTokenIssuer()
    const token = issuer.issue(selector, issuedAt, "digest-a")
    expect(token).toMatch(/^\d+\.[0-9a-f]{64}$/)
    expect(issuer.check(token, selector, "digest-a", issuedAt + FORGET_TOKEN_LIFETIME_MS)._tag).toBe("Valid")
  })

  it("expire after ten minutes", () => {
    const issuer = makeTokenIssuer()
    const token = issuer.issue(selector, issuedAt, "digest-a")
    expect(issuer.check(token, selector, "digest-a", issuedAt + FORGET_TOKEN_LIFETIME_MS + 1)).toEqual({
      _tag: "Expired",
      issuedAtMs: issuedAt
    })
  })

  it("do not confirm other ids, another selector, another daemon's secret, or a changed issue time", () => {
    const issuer = makeTokenIssuer()
    const token = issuer.issue(selector, issuedAt, "digest-a")
    expect(issuer.check(token, selector, "digest-b", issuedAt)._tag).toBe("Mismatch")
    expect(issuer.check(token, JSON.stringify({ session: "s-2" }), "digest-a", issuedAt)._tag).toBe("Mismatch")
    expect(makeTokenIssuer().check(token, selector, "digest-a", issuedAt)._tag).toBe("Mismatch")
    const [, mac] = token.split(".")
    expect(issuer.check(`${issuedAt + 60_000}.${mac}`, selector, "digest-a", issuedAt + 60_000)._tag).toBe("Mismatch")
    expect(issuer.check("not a token", selector, "digest-a", issuedAt)._tag).toBe("Mismatch")
  })
})
