import { randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { HookEventName } from "./hook-event.js"
import { runHook } from "./hook-handler.js"
import { type HookHome, makeHookHome, manifestFor, payloadFor, stdinOf } from "./hook-home.test-support.js"
import { exitSuccess, listenRecallServer, sampleRecallResponse } from "./recall-server.test-support.js"

/**
 * The hook handler run by Claude Code: the generation in argv is one of the manifest's
 * `claude_hooks` registrations, so the capture is tagged `claude` with the registration's claude
 * home, and Claude Code's payloads (no turn_id; prompt_id instead) are read as they are.
 */
let home: HookHome
let claudeHome: string
let claudeGeneration: string
beforeEach(() => {
  home = makeHookHome()
  claudeHome = NodePath.join(home.root, ".claude")
  Fs.mkdirSync(claudeHome, { mode: 0o700 })
  claudeGeneration = randomUUID()
  home.writeManifest(
    manifestFor(home.args.installationId, home.args.generation, home.codexHome, {
      claude_hooks: [
        {
          claude_home: claudeHome,
          settings_file: NodePath.join(claudeHome, "settings.json"),
          generation: claudeGeneration,
          entries: []
        }
      ]
    })
  )
})
afterEach(() => home.dispose())

const SESSION = "0abb28db-9d75-4331-ad76-fe97d35d377d"
const PROMPT_ID = "826ac828-a579-4d9d-bda2-3c2e34d83bc6"

/** A payload as Claude Code 2.1.332 sent it (seen with `claude -p`). */
const claudePayload = (event: HookEventName, overrides: Record<string, unknown> = {}) => ({
  session_id: SESSION,
  transcript_path: NodePath.join(claudeHome, "projects", "-tmp-proj", `${SESSION}.jsonl`),
  cwd: "/tmp/proj",
  ...(event === "SessionStart" ? { hook_event_name: event, source: "startup" } : {}),
  ...(event === "UserPromptSubmit"
    ? {
        prompt_id: PROMPT_ID,
        permission_mode: "default",
        hook_event_name: event,
        prompt: "what did we decide about the deploy rollout?"
      }
    : {}),
  ...(event === "Stop"
    ? {
        prompt_id: PROMPT_ID,
        permission_mode: "default",
        effort: { level: "medium" },
        hook_event_name: event,
        stop_hook_active: false,
        last_assistant_message: "done",
        background_tasks: [],
        session_crons: []
      }
    : {}),
  ...(event === "SessionEnd" ? { prompt_id: PROMPT_ID, hook_event_name: event, reason: "other" } : {}),
  ...overrides
})

const run = (event: HookEventName, payload: unknown, generation = claudeGeneration) =>
  runHook(home.argv(event, { generation }), stdinOf(JSON.stringify(payload)))

describe("the hook handler under Claude Code", () => {
  it("captures every event tagged claude, with the claude home and the prompt id as the turn", async () => {
    for (const event of ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"] as const) {
      const result = await run(event, claudePayload(event))
      expect(result.reason, event).toMatch(/^(captured|captured_with_context|recall_\w+)$/)
    }
    const records = home.spooled()
    expect(records.map((r) => r.event).sort()).toEqual(["SessionEnd", "SessionStart", "Stop", "UserPromptSubmit"])
    for (const record of records) {
      expect(record).toMatchObject({
        agent: "claude",
        agent_home: claudeHome,
        generation: claudeGeneration,
        event_session_id: SESSION,
        transcript_path: claudePayload("Stop").transcript_path,
        turn_id: record.event === "SessionStart" ? null : PROMPT_ID
      })
    }
    // One binding for the session, within the claude home.
    expect(home.bindings()).toMatchObject([{ agent_home: claudeHome, event_session_id: SESSION }])
  })

  it("SessionStart answers with the binding in the hookSpecificOutput shape Claude Code reads", async () => {
    const result = await run("SessionStart", claudePayload("SessionStart"))
    expect(result.reason).toBe("captured_with_context")
    const output = JSON.parse(result.stdout ?? "null") as {
      hookSpecificOutput: { hookEventName: string; additionalContext: string }
    }
    expect(output.hookSpecificOutput.hookEventName).toBe("SessionStart")
    expect(output.hookSpecificOutput.additionalContext).toContain(home.bindings()[0]?.binding_key ?? "?")
  })

  it("UserPromptSubmit recalls history as additionalContext, the same document Codex gets", async () => {
    const server = await listenRecallServer(home.socketPath, (r) => exitSuccess(r.id, sampleRecallResponse))
    try {
      const claude = await run("UserPromptSubmit", claudePayload("UserPromptSubmit"))
      const codex = await run("UserPromptSubmit", payloadFor("UserPromptSubmit", home), home.args.generation)
      expect(claude.reason).toBe("captured_with_context")
      // The same document but for the frame's nonce, drawn for each answer.
      const sameNonce = (stdout: string | undefined) => stdout?.replace(/nonce=\\"[0-9a-f]{16}\\"/g, 'nonce=\\"N\\"')
      expect(sameNonce(claude.stdout)).toBe(sameNonce(codex.stdout))
      expect(claude.stdout).not.toBe(codex.stdout)
      const output = JSON.parse(claude.stdout ?? "null") as {
        hookSpecificOutput: { hookEventName: string; additionalContext: string }
      }
      expect(output.hookSpecificOutput.hookEventName).toBe("UserPromptSubmit")
      expect(output.hookSpecificOutput.additionalContext).toMatch(/^blctx recalled history .*\n.*never instructions/)
      expect(
        home
          .spooled()
          .map((r) => r.agent)
          .sort()
      ).toEqual(["claude", "codex"])
    } finally {
      await server.close()
    }
  })

  it("Codex's generation still captures as codex; a generation neither records is stale", async () => {
    expect((await run("Stop", payloadFor("Stop", home), home.args.generation)).reason).toBe("captured")
    expect(home.spooled()).toMatchObject([{ agent: "codex", agent_home: home.codexHome }])
    expect((await run("Stop", claudePayload("Stop"), randomUUID())).reason).toBe("stale_generation")
    expect(home.spooled()).toHaveLength(1)
  })

  it("a claude_hooks record without a usable claude home → manifest_unreadable", async () => {
    home.writeManifest(
      manifestFor(home.args.installationId, home.args.generation, home.codexHome, {
        claude_hooks: [{ claude_home: "relative", generation: claudeGeneration, entries: [] }]
      })
    )
    expect((await run("Stop", claudePayload("Stop"))).reason).toBe("manifest_unreadable")
    expect(home.spooled()).toEqual([])
  })
})
