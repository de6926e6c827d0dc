import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { differingFields, sessionBinding, storedProject, storedUpdate } from "./note-content.js"
import { LogUpdateRequest } from "./notes-contract.js"

const KEY = "sk-proj-FakeOpenAiKey0123456789abcdefGHIJ"
const decode = Schema.decodeUnknownSync(LogUpdateRequest)
const request = decode({
  session_id: "3F0C9A52-6A1B-4C1E-9D7E-2B5F8A4C6D10",
  update_id: "0199A000-0000-7000-8000-00000000ABCD",
  text: `OPENAI_API_KEY is ${KEY} for this repo.`,
  tags: ["deploy", `key ${KEY}`],
  source_text: `Use ${KEY} from now on.`
})

describe("an update as stored", () => {
  it("is redacted in every field a caller wrote, with ids lower-cased and the counts kept", () => {
    const stored = storedUpdate(request)
    expect(JSON.stringify(stored)).not.toContain("FakeOpenAiKey")
    expect(stored).toMatchObject({
      session_id: "3f0c9a52-6a1b-4c1e-9d7e-2b5f8a4c6d10",
      update_id: "0199a000-0000-7000-8000-00000000abcd",
      kind: "note",
      authorship: "agent_generated",
      tags: ["deploy", "key [REDACTED:openai_key]"],
      source_text: "Use [REDACTED:openai_key] from now on."
    })
    expect(stored.text).toContain("[REDACTED:openai_key]")
    expect(stored.text_redactions).toBe(1)
    expect(stored.redactions).toBe(3)
    expect(stored.source_text_sha256).toMatch(/^[0-9a-f]{64}$/)
  })

  it("hashes the stored content: defaults spelt out change nothing, any content field does", () => {
    const base = storedUpdate(request)
    expect(storedUpdate({ ...request, kind: "note", authorship: "agent_generated" }).content_sha256).toBe(
      base.content_sha256
    )
    // Another secret in the same place stores the same text: the same content.
    expect(storedUpdate({ ...request, text: request.text.replace("GHIJ", "KLMN") }).content_sha256).toBe(
      base.content_sha256
    )
    const changes = [
      { ...request, text: "Other text." },
      { ...request, tags: ["deploy"] },
      { ...request, kind: "decision" as const },
      { ...request, authorship: "user_requested" as const },
      { ...request, session_id: "4f0c9a52-6a1b-4c1e-9d7e-2b5f8a4c6d10" }
    ]
    for (const changed of changes) expect(storedUpdate(changed).content_sha256).not.toBe(base.content_sha256)
    const { source_text: _, ...withoutSource } = request
    const noSource = storedUpdate(withoutSource)
    expect(noSource.content_sha256).not.toBe(base.content_sha256)
    expect(differingFields(base, noSource)).toEqual(["source_text"])
    expect(differingFields(base, storedUpdate({ ...request, kind: "status", tags: [] }))).toEqual(["kind", "tags"])
  })

  it("stores a session's project redacted without trailing slashes, and its ids lower-cased", () => {
    expect(storedProject("/home/dev/app///")).toBe("/home/dev/app")
    expect(storedProject("/")).toBe("/")
    expect(storedProject(`/srv/${KEY}/app`)).toBe("/srv/[REDACTED:openai_key]/app")
    expect(
      sessionBinding({
        binding_key: "0199A000-0000-7000-8000-00000000ABCD",
        parent_session_id: "3F0C9A52-6A1B-4C1E-9D7E-2B5F8A4C6D10"
      })
    ).toEqual({
      binding_key: "0199a000-0000-7000-8000-00000000abcd",
      project: null,
      parent_session_id: "3f0c9a52-6a1b-4c1e-9d7e-2b5f8a4c6d10"
    })
  })
})
