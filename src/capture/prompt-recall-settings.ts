import * as NodePath from "node:path"
import type { HookFs } from "./hook-fs.js"

/**
 * config.json `prompt_recall`: whether the UserPromptSubmit hook asks the daemon for matching
 * history, how long it may wait (connect and answer together), how many hits it adds and the
 * relevance floor. The bounds and defaults are defined once here; src/config/config.ts validates
 * the file with them. Must not import `effect` (the hook handler's start-up budget).
 */
export interface PromptRecallSettings {
  readonly enabled: boolean
  readonly deadline_ms: number
  readonly limit: number
  readonly min_relevance: number
}

export const PROMPT_RECALL_DEFAULTS: PromptRecallSettings = {
  enabled: true,
  deadline_ms: 150,
  limit: 3,
  min_relevance: 0.55
}

/**
 * Inclusive bounds. `limit` is the daemon's PromptRecallRequest bound. A deadline beyond the
 * timeout the hook is registered with (src/codex/hooks-file.ts) only lets Codex stop the handler
 * first: the event is spooled before the wait, so only the context is lost.
 */
export const PROMPT_RECALL_BOUNDS = {
  deadline_ms: { min: 10, max: 10_000 },
  limit: { min: 1, max: 10 },
  min_relevance: { min: 0, max: 1 }
} as const

const CONFIG_MAX_BYTES = 1_048_576

const within = (value: unknown, bounds: { readonly min: number; readonly max: number }, integer: boolean) =>
  typeof value === "number" &&
  Number.isFinite(value) &&
  (!integer || Number.isInteger(value)) &&
  value >= bounds.min &&
  value <= bounds.max

/** The settings from a parsed config.json; each missing or invalid field takes its default. */
export const promptRecallSettingsOf = (config: unknown): PromptRecallSettings => {
  const section =
    typeof config === "object" && config !== null ? (config as { prompt_recall?: unknown }).prompt_recall : undefined
  if (typeof section !== "object" || section === null) return PROMPT_RECALL_DEFAULTS
  const s = section as Record<string, unknown>
  const d = PROMPT_RECALL_DEFAULTS
  return {
    enabled: typeof s.enabled === "boolean" ? s.enabled : d.enabled,
    deadline_ms: within(s.deadline_ms, PROMPT_RECALL_BOUNDS.deadline_ms, true)
      ? (s.deadline_ms as number)
      : d.deadline_ms,
    limit: within(s.limit, PROMPT_RECALL_BOUNDS.limit, true) ? (s.limit as number) : d.limit,
    min_relevance: within(s.min_relevance, PROMPT_RECALL_BOUNDS.min_relevance, false)
      ? (s.min_relevance as number)
      : d.min_relevance
  }
}

/**
 * Reads `<config-home>/blctx/config.json` leniently: a missing, unreadable, oversized or
 * invalid file means the defaults (`blctx doctor` reports a bad file; a hook must not fail on it).
 */
export const readPromptRecallSettings = (fs: HookFs, configHome: string): PromptRecallSettings => {
  try {
    const path = NodePath.join(configHome, "blctx", "config.json")
    const fd = fs.openNoFollow(path)
    try {
      const stat = fs.fstat(fd)
      // Only this user's file, not writable by others, steers the hook (as ConfigFile requires).
      if (!stat.isFile() || stat.size > CONFIG_MAX_BYTES || stat.uid !== (process.getuid?.() ?? -1)) {
        return PROMPT_RECALL_DEFAULTS
      }
      if ((stat.mode & 0o022) !== 0) return PROMPT_RECALL_DEFAULTS
      return promptRecallSettingsOf(JSON.parse(fs.readText(fd)))
    } finally {
      fs.close(fd)
    }
  } catch {
    return PROMPT_RECALL_DEFAULTS
  }
}
