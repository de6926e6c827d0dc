import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { NodeTranscriptFilesLive } from "../../layers/node-transcript-files.js"
import { MAX_NESTING_DEPTH } from "../transcripts/decode-line.js"
import { type ExploreView, exploreFile } from "./explore-file.js"
import { renderFile } from "./render-explore-text.js"
import { stringifyForTerminal } from "./terminal-json.js"

let dir: string
beforeEach(() => {
  dir = Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-explore-hostile-"))
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`
const deepObject = (depth: number) => {
  let text = '"x"'
  for (let i = 0; i < depth; i++) text = `{"a":${text}}`
  return text
}

describe("explore at the nesting limit", () => {
  it.effect("every view renders lines nested up to the limit, as JSON and as text; deeper lines are unreadable", () =>
    Effect.gen(function* () {
      const path = NodePath.join(dir, "deep.jsonl")
      const lines = [
        // Nested exactly as deep as the reader decodes: records, walked by every view.
        `{"type":"event_msg","payload":${nested(MAX_NESTING_DEPTH - 1)}}`,
        `{"type":"response_item","payload":{"type":"message","role":"user","content":[${deepObject(MAX_NESTING_DEPTH - 4)}]}}`,
        `{"type":${deepObject(MAX_NESTING_DEPTH - 1)}}`,
        // One level more: unreadable, and reading goes on.
        `{"type":"event_msg","payload":${nested(MAX_NESTING_DEPTH)}}`,
        '{"type":"event_msg","payload":{"type":"user_message","message":"still read"}}'
      ]
      Fs.writeFileSync(path, `${lines.join("\n")}\n`)
      for (const view of ["conversation", "messages", "raw", "preview"] as const satisfies ReadonlyArray<ExploreView>) {
        for (const details of [false, true]) {
          const result = yield* exploreFile({ path, view, details, startLine: 1, limit: 50 }).pipe(
            Effect.provide(NodeTranscriptFilesLive)
          )
          expect(result.totals.records).toBe(5)
          expect(result.totals.parse_errors).toBe(2)
          expect(result.totals.by_reason).toMatchObject({
            "unclassified: unreadable line: not_a_record": 1,
            "unclassified: unreadable line: too_deep": 1
          })
          expect(JSON.parse(stringifyForTerminal(result))).toMatchObject({ view })
          expect(typeof renderFile(result, details)).toBe("string")
        }
      }
    })
  )
})
