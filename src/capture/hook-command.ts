import * as NodePath from "node:path"
import { HOOK_EVENTS, type HookEventName } from "./hook-event.js"

/**
 * The hook handler's command line: which event it handles, for which installation and hook
 * generation, and the four XDG roots (so the agent's environment can never point it at another
 * installation). Built by the codex_hooks step, parsed by programs/hook.ts. Must not import
 * `effect` (the handler's start-up budget).
 */
export interface HookArgs {
  readonly event: HookEventName
  readonly installationId: string
  readonly generation: string
  readonly dataHome: string
  readonly configHome: string
  readonly cacheHome: string
  readonly stateHome: string
}

/**
 * Set (to "1") on the agent CLIs blctx runs itself (`claude mcp get`, `codex mcp add`, the Codex
 * app server...). Claude Code runs its SessionStart and SessionEnd hooks even for those
 * configuration commands, and their environment reaches the hooks: a handler that sees it exits
 * at once, so blctx's own checks never look like a person's use of the agent.
 */
export const OWN_CALL_VARIABLE = "BLCTX_OWN_AGENT_CALL"

/** Whether this hook runs inside an agent CLI that blctx itself started. */
export const isOwnCall = (env: Readonly<Record<string, string | undefined>>) => env[OWN_CALL_VARIABLE] === "1"

const FLAGS = {
  "installation-id": "installationId",
  generation: "generation",
  "data-home": "dataHome",
  "config-home": "configHome",
  "cache-home": "cacheHome",
  "state-home": "stateHome"
} as const satisfies Record<string, keyof HookArgs>

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** `EVENT --installation-id ID --generation G --data-home ... --state-home ...` */
export const hookArgv = (args: HookArgs): ReadonlyArray<string> => [
  args.event,
  ...Object.entries(FLAGS).flatMap(([flag, key]) => [`--${flag}`, args[key]])
]

/** A word for the shell command line Codex runs (`sh -c`): quoted only when it needs to be. */
export const shellWord = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`)

/** The one command string a hook entry carries: node, the bundled handler, then hookArgv. */
export const hookCommandLine = (node: string, handler: string, args: HookArgs) =>
  [node, handler, ...hookArgv(args)].map(shellWord).join(" ")

/** Strict: an unknown, repeated or missing flag, a relative root or a malformed id is refused. */
export const parseHookArgv = (
  argv: ReadonlyArray<string>
): { readonly ok: true; readonly args: HookArgs } | { readonly ok: false; readonly reason: string } => {
  const [event, ...rest] = argv
  if (!(HOOK_EVENTS as ReadonlyArray<string>).includes(event ?? "")) {
    return { ok: false, reason: `unknown hook event ${JSON.stringify(event ?? "")}` }
  }
  const found: Partial<Record<keyof HookArgs, string>> = {}
  for (let i = 0; i < rest.length; i += 2) {
    const flag = rest[i] ?? ""
    const key = flag.startsWith("--") ? FLAGS[flag.slice(2) as keyof typeof FLAGS] : undefined
    const value = rest[i + 1]
    if (key === undefined) return { ok: false, reason: `unknown argument ${JSON.stringify(flag)}` }
    if (value === undefined) return { ok: false, reason: `${flag} needs a value` }
    if (found[key] !== undefined) return { ok: false, reason: `${flag} given twice` }
    found[key] = value
  }
  for (const [flag, key] of Object.entries(FLAGS)) {
    const value = found[key]
    if (value === undefined) return { ok: false, reason: `--${flag} is missing` }
    const isId = key === "installationId" || key === "generation"
    if (isId ? !UUID.test(value) : !NodePath.isAbsolute(value)) {
      return { ok: false, reason: `--${flag} ${isId ? "must be a UUID" : "must be an absolute path"}` }
    }
  }
  return { ok: true, args: { ...(found as Omit<HookArgs, "event">), event: event as HookEventName } }
}
