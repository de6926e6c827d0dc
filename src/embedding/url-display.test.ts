import { describe, expect, it } from "@effect/vitest"
import { redactUrlCredentials } from "./url-display.js"

describe("redactUrlCredentials", () => {
  it("hides the password of every URL in a text and keeps the rest", () => {
    expect(redactUrlCredentials("https://user:s3cret@mirror.example/hf")).toBe("https://user:***@mirror.example/hf")
    expect(
      redactUrlCredentials("too many redirects from http://a:b@h1:8080/x to https://c:d@h2/y?z=1 (tried twice)")
    ).toBe("too many redirects from http://a:***@h1:8080/x to https://c:***@h2/y?z=1 (tried twice)")
  })
  it("hides a password that contains @ or : up to the last @ of the authority", () => {
    expect(redactUrlCredentials("https://me:p@ss:w@host/")).toBe("https://me:***@host/")
    expect(redactUrlCredentials("https://me:@host")).toBe("https://me:***@host")
  })
  it("leaves URLs without a password alone", () => {
    for (const text of ["https://huggingface.co/Qdrant/bge-small-en", "https://me@host/", "http://127.0.0.1:9/a@b"]) {
      expect(redactUrlCredentials(text)).toBe(text)
    }
  })
})
