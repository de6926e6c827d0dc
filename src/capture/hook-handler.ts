import * as NodePath from "node:path"
import * as v from "valibot"
import { type Binding, bindingFor } from "./binding-store.js"
import { bindingsDirIn, captureDirIn, spoolDirIn } from "./capture-paths.js"
import { CAPTURE_RECORD_VERSION, type CaptureAgent, CaptureRecord } from "./capture-record.js"
import { type HookArgs, isOwnCall, parseHookArgv } from "./hook-command.js"
import { hookOutput, recallContext, sessionStartContext } from "./hook-context.js"
import { type HookEvent, MAX_EVENT_BYTES } from "./hook-event.js"
import type { HookFs } from "./hook-fs.js"
import { APP_DIR, openGate } from "./hook-gate.js"
import { decodeHookPayload } from "./hook-payload.js"
import type { ReceiptReason } from "./hook-receipt.js"
import { readBoundedInput } from "./hook-stdin.js"
import { ensurePrivateDir, privateDirState } from "./private-dir.js"
import { askPromptRecall, type RecallResult } from "./prompt-recall-client.js"
import { readPromptRecallSettings } from "./prompt-recall-settings.js"
import { recallQueryOf } from "./recall-query.js"
import { writeSpoolRecord } from "./spool-writer.js"

/**
 * One run of a lifecycle hook (Codex's or Claude Code's: the manifest registration holding argv's
 * generation says which), start to end, as a function (programs/hook.ts only adds
 * the process around it): argv and stdin in, at most one stdout document and one receipt reason
 * out. Nothing here throws for bad input or a closed gate; it answers with the reason instead.
 * Must not import `effect` (the handler's start-up budget: Node's own start-up and little more).
 */
export interface HookRunResult {
  /** argv's event, as given (the receipt shows only known names). */
  readonly event: string
  readonly reason: ReceiptReason
  /** The JSON document for stdout, if any. */
  readonly stdout?: string
}

/** Codex writes the payload at once and closes stdin; waiting longer only delays the agent. */
export const STDIN_DEADLINE_MS = 1_000

/** The daemon's socket, `<state-home>/blctx/blctxd.sock` (src/rpc/socket-location.ts). */
export const daemonSocketIn = (stateHome: string) => NodePath.join(stateHome, APP_DIR, "blctxd.sock")

type Capture = { readonly ok: true; readonly binding: Binding } | { readonly ok: false; readonly reason: ReceiptReason }

/** Binds the session and spools the event; the directories must be private and this user's. */
const capture = (
  fs: HookFs,
  args: HookArgs,
  event: HookEvent,
  agent: CaptureAgent,
  agentHome: string,
  receivedAt: Date
): Capture => {
  const dataDir = NodePath.join(args.dataHome, APP_DIR)
  const dataState = privateDirState(fs, dataDir)
  if (dataState !== "private")
    return { ok: false, reason: dataState === "missing" ? "not_installed" : "unsafe_directory" }
  const spoolDir = spoolDirIn(dataDir)
  const bindingsDir = bindingsDirIn(dataDir)
  for (const dir of [captureDirIn(dataDir), spoolDir, bindingsDir]) {
    if (ensurePrivateDir(fs, dir) !== "private") return { ok: false, reason: "unsafe_directory" }
  }
  let binding: Binding
  try {
    binding = bindingFor(fs, bindingsDir, agentHome, event.session_id, receivedAt)
  } catch {
    return { ok: false, reason: "binding_failed" }
  }
  const record = v.safeParse(CaptureRecord, {
    v: CAPTURE_RECORD_VERSION,
    installation_id: args.installationId,
    generation: args.generation,
    agent,
    agent_home: agentHome,
    event: event.hook_event_name,
    event_session_id: event.session_id,
    binding_key: binding.binding_key,
    session_uuid: binding.session_uuid,
    turn_id: event.turn_id ?? event.prompt_id ?? null,
    cwd: event.cwd,
    transcript_path: event.transcript_path,
    received_at: receivedAt.toISOString()
  } satisfies CaptureRecord)
  if (!record.success) return { ok: false, reason: "bad_payload" }
  try {
    writeSpoolRecord(fs, spoolDir, record.output, receivedAt.getTime())
  } catch {
    return { ok: false, reason: "spool_failed" }
  }
  return { ok: true, binding }
}

type Recall = RecallResult | { readonly ok: false; readonly reason: "recall_disabled" | "recall_skipped" }

/**
 * Prompt-time recall, started before the capture so the daemon works while the files are written.
 * The deadline counts from `startedAt` (the hook program passes the end of Node's start-up), not
 * from the request, so loading the handler, reading stdin and the gate come out of it: the whole
 * prompt hook then costs at most Node's start-up plus the deadline.
 */
const startRecall = (fs: HookFs, args: HookArgs, prompt: string | undefined, startedAt: number): Promise<Recall> => {
  const settings = readPromptRecallSettings(fs, args.configHome)
  if (!settings.enabled) return Promise.resolve({ ok: false, reason: "recall_disabled" })
  const query = recallQueryOf(prompt)
  if (query === undefined) return Promise.resolve({ ok: false, reason: "recall_skipped" })
  return askPromptRecall(
    daemonSocketIn(args.stateHome),
    { prompt: query, limit: settings.limit, floor: settings.min_relevance },
    Math.max(0, settings.deadline_ms - (performance.now() - startedAt))
  )
}

/**
 * One hook run, its files and stdin through `fs` (programs/hook.ts passes node:fs, stdin read from
 * fd 0 without loading Node's streams). `startedAt` says when the recall deadline starts, on
 * `performance.now()`'s clock (0 is this process's start); it is asked only by a prompt's recall,
 * so the other events never load Node's performance timing.
 */
export const runHook = async (
  argv: ReadonlyArray<string>,
  fs: HookFs,
  now: () => Date = () => new Date(),
  startedAt?: () => number,
  env: Readonly<Record<string, string | undefined>> = process.env
): Promise<HookRunResult> => {
  // Without `startedAt`, the deadline starts now: this call's time, read on performance's clock later.
  const entered = Date.now()
  const deadlineStart = startedAt ?? (() => performance.now() - (Date.now() - entered))
  const parsed = parseHookArgv(argv)
  if (!parsed.ok) return { event: argv[0] ?? "", reason: "bad_arguments" }
  const args = parsed.args
  const only = (reason: ReceiptReason): HookRunResult => ({ event: args.event, reason })
  // blctx's own `claude mcp get` fires SessionStart/SessionEnd: nothing of it is a session to capture.
  if (isOwnCall(env)) return only("own_call")

  const limits = { maxBytes: MAX_EVENT_BYTES, deadlineMs: STDIN_DEADLINE_MS }
  const input = await readBoundedInput(fs.stdin, limits)
  if (!input.ok) return only(input.reason)
  const payload = decodeHookPayload(input.bytes, args.event)
  if (!payload.ok) return only(payload.reason)
  const event = payload.event

  const gate = openGate(fs, args.stateHome, args.installationId, args.generation)
  if (!gate.open) return only(gate.reason)

  const recall =
    event.hook_event_name === "UserPromptSubmit" ? startRecall(fs, args, event.prompt, deadlineStart()) : undefined
  const captured = capture(fs, args, event, gate.agent, gate.agentHome, now())
  if (!captured.ok) return only(captured.reason)

  switch (event.hook_event_name) {
    case "SessionStart":
      return {
        event: args.event,
        reason: "captured_with_context",
        stdout: hookOutput("SessionStart", sessionStartContext(captured.binding, event.cwd))
      }
    case "UserPromptSubmit": {
      const answer = await (recall ?? Promise.resolve<Recall>({ ok: false, reason: "recall_skipped" }))
      if (!answer.ok) return only(answer.reason)
      const context = recallContext(answer.answer)
      if (context === undefined) return only("recall_no_match")
      return { event: args.event, reason: "captured_with_context", stdout: hookOutput("UserPromptSubmit", context) }
    }
    default:
      return only("captured")
  }
}
