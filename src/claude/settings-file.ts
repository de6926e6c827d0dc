/**
 * Claude Code's user settings, `<claude home>/settings.json` (claude home: CLAUDE_CONFIG_DIR, or
 * `~/.claude`), where it loads command hooks from. Its `hooks` key has exactly the shape of
 * Codex's hooks.json (`{"<Event>": [{"matcher"?, "hooks": [{"type": "command", "command",
 * "timeout"}]}]}`, timeouts in seconds, checked with Claude Code 2.1), beside every other setting
 * (permissions, env, model, ...). So the parsing, owned-entry and editing logic of
 * `src/codex/hooks-file.ts` serves it as it is: it keeps every key and entry it does not judge.
 * This module holds only what is Claude Code's own. Pure.
 */

/** Where Claude Code reads user settings (and their hooks) in a claude home. */
export const claudeSettingsFile = (claudeHome: string) => `${claudeHome.replace(/\/+$/, "")}/settings.json`

/**
 * Whether the settings turn every hook off (`"disableAllHooks": true`): Claude Code then runs
 * none of them, blctx's included. blctx never changes that setting; it reports it.
 */
export const hooksDisabled = (settings: unknown): boolean =>
  typeof settings === "object" &&
  settings !== null &&
  (settings as { readonly disableAllHooks?: unknown }).disableAllHooks === true

/**
 * Claude Code's managed (administrator) settings file on Linux. Claude Code 2.1 also reads a
 * drop-in folder beside it and OS or server policies, which blctx does not look at.
 */
export const CLAUDE_MANAGED_SETTINGS = "/etc/claude-code/managed-settings.json"

/**
 * The managed setting that keeps Claude Code from running hooks in user settings, if any:
 * `disableAllHooks` (no hook runs) or `allowManagedHooksOnly` (only the administrator's run).
 * Text that is not a JSON object restricts nothing here (Claude Code reports it itself).
 */
export const managedHooksRestriction = (text: string): "disableAllHooks" | "allowManagedHooksOnly" | undefined => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof json !== "object" || json === null) return undefined
  const settings = json as { readonly disableAllHooks?: unknown; readonly allowManagedHooksOnly?: unknown }
  if (settings.disableAllHooks === true) return "disableAllHooks"
  if (settings.allowManagedHooksOnly === true) return "allowManagedHooksOnly"
  return undefined
}
