import { randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { HookEventName } from "./hook-event.js"
import { runHook } from "./hook-handler.js"
import { type HookHome, makeHookHome, manifestFor, stdinOf } from "./hook-home.test-support.js"
import { exitSuccess, listenRecallServer, sampleRecallResponse } from "./recall-server.test-support.js"

/**
 * The hook handler run by Gemini CLI: its registration is `gemini_hooks`, its prompt and
 * end-of-turn events arrive as BeforeAgent and AfterAgent under blctx's UserPromptSubmit and Stop
 * commands, and its first events carry an empty transcript_path.
 */
let home: HookHome
let geminiHome: string
let generation: string
beforeEach(() => {
  home = makeHookHome()
  geminiHome = NodePath.join(home.root, ".gemini")
  Fs.mkdirSync(geminiHome, { mode: 0o700 })
  generation = randomUUID()
  home.writeManifest(
    manifestFor(home.args.installationId, home.args.generation, home.codexHome, {
      gemini_hooks: [
        { gemini_home: geminiHome, settings_file: NodePath.join(geminiHome, "settings.json"), generation, entries: [] }
      ]
    })
  )
})
afterEach(() => home.dispose())

const SESSION = "5c1f7a2e-3b9d-4e61-8f0a-2d4c6b8e1f35"

/** A payload as Gemini CLI 0.61 builds it: the base fields, a timestamp, and each event's own. */
const geminiPayload = (name: string, transcript: string, own: Record<string, unknown>) => ({
  session_id: SESSION,
  transcript_path: transcript,
  cwd: "/tmp/proj",
  hook_event_name: name,
  timestamp: "2026-12-03T19:50:00.000Z",
  ...own
})
const TRANSCRIPT = () => NodePath.join(geminiHome, "tmp", "proj", "chats", "session-2026-12-03T19-50-5c1f7a2e.jsonl")
const PROMPT = "what did we decide about the deploy rollout?"

const cases: ReadonlyArray<readonly [HookEventName, () => object]> = [
  ["SessionStart", () => geminiPayload("SessionStart", "", { source: "startup" })],
  ["UserPromptSubmit", () => geminiPayload("BeforeAgent", TRANSCRIPT(), { prompt: PROMPT })],
  [
    "Stop",
    () =>
      geminiPayload("AfterAgent", TRANSCRIPT(), { prompt: PROMPT, prompt_response: "done", stop_hook_active: false })
  ],
  ["SessionEnd", () => geminiPayload("SessionEnd", TRANSCRIPT(), { reason: "exit" })]
]

const run = (event: HookEventName, payload: unknown) =>
  runHook(home.argv(event, { generation }), stdinOf(JSON.stringify(payload)))

describe("the hook handler under Gemini CLI", () => {
  it("captures every event tagged gemini with its folder; BeforeAgent and AfterAgent are the prompt and the turn's end", async () => {
    for (const [event, payload] of cases) {
      const result = await run(event, payload())
      expect(result.reason, event).toMatch(/^(captured|captured_with_context|recall_\w+)$/)
    }
    const records = home.spooled()
    expect(records.map((r) => r.event).sort()).toEqual(["SessionEnd", "SessionStart", "Stop", "UserPromptSubmit"])
    for (const record of records) {
      expect(record).toMatchObject({ agent: "gemini", agent_home: geminiHome, generation, event_session_id: SESSION })
      // Gemini sends "" before its session file exists: no transcript yet.
      expect(record.transcript_path).toBe(record.event === "SessionStart" ? null : TRANSCRIPT())
    }
  })

  it("a Gemini event under another of blctx's commands is refused (AfterAgent is no prompt)", async () => {
    const [, stop] = cases[2] ?? ["Stop", () => ({})]
    expect((await run("UserPromptSubmit", stop())).reason).toBe("event_mismatch")
    expect(home.spooled()).toEqual([])
  })

  it("BeforeAgent recalls history as additionalContext, in the hookSpecificOutput Gemini reads", async () => {
    const server = await listenRecallServer(home.socketPath, (r) => exitSuccess(r.id, sampleRecallResponse))
    try {
      const [, prompt] = cases[1] ?? ["UserPromptSubmit", () => ({})]
      const result = await run("UserPromptSubmit", prompt())
      expect(result.reason).toBe("captured_with_context")
      const output = JSON.parse(result.stdout ?? "null") as { hookSpecificOutput: { additionalContext: string } }
      expect(output.hookSpecificOutput.additionalContext).toMatch(/^blctx recalled history /)
    } finally {
      await server.close()
    }
  })
})
