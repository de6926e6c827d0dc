import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { FORGET_TOKEN_LIFETIME_MS } from "./forget-contract.js"

/** Why a token does not confirm a forget. */
export type TokenCheck =
  | { readonly _tag: "Valid" }
  | { readonly _tag: "Mismatch"; readonly reason: string }
  | { readonly _tag: "Expired"; readonly issuedAtMs: number }

/**
 * Confirmation tokens: `<issued-at ms>.<HMAC-SHA256(secret, selector, issued-at, ids digest)>`.
 * The secret is random per daemon process and never stored, so a restart invalidates every token;
 * binding the digest of the ids a preview listed means a token confirms exactly what was shown:
 * if anything was added to or removed from the selection meanwhile, it no longer verifies.
 */
export const makeTokenIssuer = (secret: Uint8Array = randomBytes(32)) => {
  const mac = (selector: string, issuedAtMs: number, digest: string) =>
    createHmac("sha256", secret).update(`${selector}\n${issuedAtMs}\n${digest}`).digest("hex")

  const issue = (selector: string, issuedAtMs: number, digest: string) =>
    `${issuedAtMs}.${mac(selector, issuedAtMs, digest)}`

  const check = (token: string, selector: string, digest: string, nowMs: number): TokenCheck => {
    const match = /^(\d{1,15})\.([0-9a-f]{64})$/.exec(token)
    if (match === null) return { _tag: "Mismatch", reason: "it is not a token blctx issued" }
    const issuedAtMs = Number(match[1])
    const expected = Buffer.from(mac(selector, issuedAtMs, digest), "hex")
    const given = Buffer.from(match[2] ?? "", "hex")
    if (!timingSafeEqual(expected, given)) {
      return {
        _tag: "Mismatch",
        reason:
          "it was issued for another selector, by a daemon that has restarted since (a restart invalidates every token), or what the selector matches changed after the preview"
      }
    }
    if (nowMs - issuedAtMs > FORGET_TOKEN_LIFETIME_MS || nowMs < issuedAtMs) return { _tag: "Expired", issuedAtMs }
    return { _tag: "Valid" }
  }

  return { issue, check } as const
}

export type TokenIssuer = ReturnType<typeof makeTokenIssuer>
