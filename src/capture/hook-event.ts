import * as v from "valibot"

/**
 * What Codex sends a command hook on stdin, as far as blctx reads it (seen from Codex 0.171):
 * `{session_id, transcript_path, cwd, hook_event_name, ...}`, plus `turn_id` and `prompt` on
 * UserPromptSubmit, `turn_id` on Stop, `source` on SessionStart and `reason` on SessionEnd.
 * Claude Code (2.1) sends the same fields without `turn_id`; it sends `prompt_id` instead on
 * UserPromptSubmit, Stop and SessionEnd. Gemini CLI (0.61) sends the same base fields (plus
 * `timestamp`), names its prompt and end-of-turn events BeforeAgent and AfterAgent, and sends an
 * empty `transcript_path` before its session file exists.
 * Other fields are ignored, so a newer Codex adding some does not break capture.
 *
 * Written with valibot, not effect/Schema: the hook handler starts on every prompt and its
 * budget is Node's own start-up; effect/Schema adds about 40 ms of module loading to it, valibot
 * under 1 ms (measured in `npm run bench -- hooks`). This module must not import `effect`.
 */
export const HOOK_EVENTS = ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"] as const
export type HookEventName = (typeof HOOK_EVENTS)[number]

/**
 * Other agents' names for blctx's events, as their payloads carry them: Gemini CLI's BeforeAgent
 * is the prompt (it sends `prompt`) and AfterAgent the end of a turn. Data, so an agent that names
 * an event differently is one more entry here (its installer record says the same names).
 */
export const EVENT_ALIASES: Readonly<Record<string, HookEventName>> = {
  BeforeAgent: "UserPromptSubmit",
  AfterAgent: "Stop"
}

export const MAX_EVENT_SESSION_ID_CHARS = 200
export const MAX_HOOK_PATH_CHARS = 4_096
/** A prompt longer than this is still captured; only prompt-time recall ignores the excess. */
export const MAX_PROMPT_CHARS = 100_000
/** The whole stdin document: anything larger is refused unread. */
export const MAX_EVENT_BYTES = 1_048_576

const absolute = (what: string) =>
  v.pipe(
    v.string(),
    v.maxLength(MAX_HOOK_PATH_CHARS, `${what} is longer than ${MAX_HOOK_PATH_CHARS} characters`),
    v.check((p) => p.startsWith("/") && !p.includes("\0"), `${what} must be an absolute path`)
  )

export const HookEvent = v.looseObject({
  hook_event_name: v.pipe(
    v.string(),
    v.transform((name) => EVENT_ALIASES[name] ?? name),
    v.picklist(HOOK_EVENTS, `hook_event_name must be one of ${HOOK_EVENTS.join(", ")}`)
  ),
  session_id: v.pipe(
    v.string("session_id is required"),
    v.minLength(1, "session_id is empty"),
    v.maxLength(MAX_EVENT_SESSION_ID_CHARS, `session_id is longer than ${MAX_EVENT_SESSION_ID_CHARS} characters`)
  ),
  cwd: absolute("cwd"),
  transcript_path: v.pipe(
    v.nullable(v.string()),
    // Gemini CLI sends "" until its session file exists: no transcript yet, as null says.
    v.transform((p) => (p === "" ? null : p)),
    v.nullable(
      v.pipe(
        absolute("transcript_path"),
        v.check((p) => p.endsWith(".jsonl"), "transcript_path must name a .jsonl file")
      )
    )
  ),
  turn_id: v.optional(v.pipe(v.string(), v.maxLength(MAX_EVENT_SESSION_ID_CHARS))),
  /** Claude Code's id of the prompt a UserPromptSubmit, Stop or SessionEnd belongs to (it sends no turn_id). */
  prompt_id: v.optional(v.pipe(v.string(), v.maxLength(MAX_EVENT_SESSION_ID_CHARS))),
  prompt: v.optional(v.string())
})
export type HookEvent = v.InferOutput<typeof HookEvent>
