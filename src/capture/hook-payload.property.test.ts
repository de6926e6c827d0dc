import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { fuzzParameters } from "../fuzz.test-support.js"
import { HOOK_EVENTS } from "./hook-event.js"
import { decodeHookPayload } from "./hook-payload.js"

const encoder = new TextEncoder()
const event = fc.constantFrom(...HOOK_EVENTS)

/** Payloads close to valid ones: every known field, each with a well-formed or a hostile value. */
const nearPayload = fc.record(
  {
    hook_event_name: fc.oneof(event, fc.string(), fc.anything()),
    session_id: fc.oneof(fc.uuid(), fc.string({ maxLength: 300 }), fc.anything()),
    cwd: fc.oneof(fc.constant("/home/dev/project"), fc.string(), fc.constant("/a\0b"), fc.anything()),
    transcript_path: fc.oneof(
      fc.constant("/home/dev/.codex/sessions/x.jsonl"),
      fc.constant(null),
      fc.string(),
      fc.anything()
    ),
    turn_id: fc.oneof(fc.string({ maxLength: 300 }), fc.anything()),
    prompt: fc.oneof(fc.string(), fc.anything())
  },
  { requiredKeys: [] }
)

describe("the hook payload decoder, on arbitrary input", () => {
  it("never throws: any bytes, any JSON, any near-valid payload is an event or a refusal", () => {
    let tried = 0
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 2048 }),
          fc.jsonValue({ maxDepth: 6 }).map((v) => encoder.encode(JSON.stringify(v))),
          nearPayload.map((v) => encoder.encode(JSON.stringify(v)))
        ),
        event,
        (bytes, expected) => {
          tried++
          const result = decodeHookPayload(bytes, expected)
          if (result.ok) {
            expect(result.event.hook_event_name).toBe(expected)
            expect(result.event.cwd.startsWith("/")).toBe(true)
          } else expect(["bad_payload", "event_mismatch"]).toContain(result.reason)
        }
      ),
      fuzzParameters(1_000)
    )
    console.log(`hook payload decoder: ${tried} inputs tried, no exception`)
  })

  it("accepts every well-formed payload for its own event and refuses it for another", () => {
    fc.assert(
      fc.property(event, fc.uuid(), fc.string({ maxLength: 200 }), (name, session, prompt) => {
        const bytes = encoder.encode(
          JSON.stringify({ hook_event_name: name, session_id: session, cwd: "/w", transcript_path: null, prompt })
        )
        expect(decodeHookPayload(bytes, name)).toMatchObject({ ok: true })
        const other = HOOK_EVENTS.find((e) => e !== name) ?? name
        expect(decodeHookPayload(bytes, other)).toEqual({ ok: false, reason: "event_mismatch" })
      }),
      fuzzParameters(200)
    )
  })
})
