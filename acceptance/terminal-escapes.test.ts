import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { hasRawTerminalControl } from "../src/terminal/terminal-controls.test-support.js"
import { type DaemonHome, makeDaemonHome } from "./support/daemon-harness.js"

/** Bytes a terminal obeys: ESC sequences (OSC 52 clipboard write, clear screen), BEL, one-byte CSI, bidi override. */
const OSC52 = "\u001b]52;c;cHduZWQ=\u0007"
const CLEAR = "\u001b[2J"
const CSI = "\u009b31m"
const RLO = "\u202e"

const line = (value: unknown) => `${JSON.stringify(value)}\n`

/** A Codex transcript whose metadata fields (cwd, timestamps) and text carry terminal escapes. */
const hostileTranscript = (dir: string) => {
  Fs.mkdirSync(dir, { recursive: true })
  const path = NodePath.join(dir, "rollout-2026-03-03T10-00-00-hostile.jsonl")
  const ts = `2026-03-03T10:00:00.000Z${CLEAR}`
  Fs.writeFileSync(
    path,
    [
      line({
        timestamp: ts,
        type: "session_meta",
        payload: {
          id: "0199b000-0000-7000-8000-000000000001",
          timestamp: ts,
          cwd: `/home/dev/escape${OSC52}${CSI}${RLO}project`,
          originator: "codex_cli_rs",
          cli_version: "0.120.0"
        }
      }),
      line({
        timestamp: ts,
        type: "event_msg",
        payload: { type: "task_started", turn_id: "0199b000-0000-7000-9000-000000000001" }
      }),
      line({
        timestamp: `2026-03-03T10:00:01.000Z${OSC52}`,
        type: "event_msg",
        payload: { type: "user_message", message: `How do we rotate the zebracorn keys?${CLEAR}`, images: [] }
      }),
      line({
        timestamp: `2026-03-03T10:00:02.000Z${CSI}`,
        type: "event_msg",
        payload: {
          type: "agent_message",
          message: `We rotate the zebracorn keys every quarter.\u0007${RLO}`,
          phase: "final_answer"
        }
      }),
      line({
        timestamp: ts,
        type: "event_msg",
        payload: { type: "task_complete", turn_id: "0199b000-0000-7000-9000-000000000001" }
      })
    ].join("")
  )
  return path
}

let home: DaemonHome | undefined
afterEach(() => {
  home?.dispose()
  home = undefined
})

describe("terminal escapes in transcript metadata", () => {
  it("never reach the terminal from search, recent or context, pretty or JSON", async () => {
    const h = makeDaemonHome("detached")
    home = h
    const install = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
    expect(install.code, install.stdout).toBe(0)
    const file = hostileTranscript(NodePath.join(h.home, "history"))
    const indexed = await h.blctx(["index", file, "--wait", "--json"])
    expect(indexed.code, indexed.stdout + indexed.stderr).toBe(0)

    const pretty = await h.blctx(["search", "zebracorn", "--pretty"])
    expect(pretty.code, pretty.stderr).toBe(0)
    expect(pretty.stdout).toContain("zebracorn")
    expect(pretty.stdout).toContain("\\x1b")
    const json = await h.blctx(["search", "zebracorn"])
    const answer = JSON.parse(json.stdout) as { results: Array<{ context_id: string; project: string | null }> }
    const contextId = answer.results[0]?.context_id
    expect(contextId).toBeDefined()
    const outputs = [
      pretty,
      json,
      await h.blctx(["recent", "--since", "2026-01-01", "--pretty"]),
      await h.blctx(["recent", "--since", "2026-01-01"]),
      await h.blctx(["context", String(contextId), "--pretty"]),
      await h.blctx(["context", String(contextId)])
    ]
    for (const out of outputs) {
      expect(out.code, out.stderr).toBe(0)
      expect(hasRawTerminalControl(out.stdout), out.stdout).toBe(false)
      expect(hasRawTerminalControl(out.stderr), out.stderr).toBe(false)
    }
  })
})
