import * as NodePath from "node:path"

// Effect-free, so the CLI's fast path (src/cli/fast-search.ts) finds the daemon's socket by the
// very rules the Paths service uses, without loading `effect`.

/**
 * Where blctx keeps its files. XDG base directories follow the spec: an override is used only
 * when it is an absolute path; a relative one is ignored as if unset.
 */
export interface ResolvedPaths {
  readonly home: string
  readonly dataHome: string
  readonly configHome: string
  readonly cacheHome: string
  readonly stateHome: string
  /** `<XDG_DATA_HOME>/blctx`: the database. */
  readonly dataDir: string
  /** `<XDG_CONFIG_HOME>/blctx`: config.json and service unit files. */
  readonly configDir: string
  /** `<XDG_CACHE_HOME>/blctx`: the embedding model. */
  readonly cacheDir: string
  /** `<XDG_STATE_HOME>/blctx`: the manifest, the socket, snapshots. */
  readonly stateDir: string
  readonly codexHome: string
  /** `CLAUDE_CONFIG_DIR`, default `~/.claude`: Claude Code's settings, skills and `projects/` transcripts. */
  readonly claudeHome: string
  /** `$GEMINI_CLI_HOME/.gemini`, default `~/.gemini`: Gemini CLI's settings and `tmp/<project>/chats/` sessions. */
  readonly geminiHome: string
  readonly database: string
  readonly manifest: string
}

export const APP_DIR = "blctx"

const absoluteOr = (value: string | undefined, fallback: string): string =>
  value !== undefined && value !== "" && NodePath.isAbsolute(value) ? NodePath.normalize(value) : fallback

/**
 * The environment variables the paths come from besides HOME, listed once: the Paths service and
 * resolvePathsFromEnv both read exactly these. `GEMINI_CLI_HOME` is Gemini CLI's stand-in for
 * HOME: its folder is `.gemini` under it.
 */
export const PATH_VARIABLES = [
  "XDG_DATA_HOME",
  "XDG_CONFIG_HOME",
  "XDG_CACHE_HOME",
  "XDG_STATE_HOME",
  "CODEX_HOME",
  "CLAUDE_CONFIG_DIR",
  "GEMINI_CLI_HOME"
] as const
export type PathVariable = (typeof PATH_VARIABLES)[number]

export type PathInputs = { readonly home: string } & { readonly [V in PathVariable]?: string | undefined }

/** Pure resolution, so the rules are testable without touching the environment. */
export const resolvePaths = (input: PathInputs): ResolvedPaths => {
  const home = input.home
  const pick = (v: string | undefined, fallback: string) => absoluteOr(v, fallback)
  const dataHome = pick(input.XDG_DATA_HOME, NodePath.join(home, ".local", "share"))
  const configHome = pick(input.XDG_CONFIG_HOME, NodePath.join(home, ".config"))
  const cacheHome = pick(input.XDG_CACHE_HOME, NodePath.join(home, ".cache"))
  const stateHome = pick(input.XDG_STATE_HOME, NodePath.join(home, ".local", "state"))
  const dataDir = NodePath.join(dataHome, APP_DIR)
  const stateDir = NodePath.join(stateHome, APP_DIR)
  return {
    home,
    dataHome,
    configHome,
    cacheHome,
    stateHome,
    dataDir,
    configDir: NodePath.join(configHome, APP_DIR),
    cacheDir: NodePath.join(cacheHome, APP_DIR),
    stateDir,
    codexHome: pick(input.CODEX_HOME, NodePath.join(home, ".codex")),
    claudeHome: pick(input.CLAUDE_CONFIG_DIR, NodePath.join(home, ".claude")),
    geminiHome: NodePath.join(pick(input.GEMINI_CLI_HOME, home), ".gemini"),
    database: NodePath.join(dataDir, "context.db"),
    manifest: NodePath.join(stateDir, "installation.json")
  }
}

/**
 * The paths of a process with this environment, as the Paths service reads them (HOME must be
 * absolute), or undefined when HOME is missing or relative (the Paths service fails then).
 */
export const resolvePathsFromEnv = (env: NodeJS.ProcessEnv): ResolvedPaths | undefined => {
  const home = env.HOME
  if (home === undefined || !NodePath.isAbsolute(home)) return undefined
  return resolvePaths({ home, ...Object.fromEntries(PATH_VARIABLES.map((name) => [name, env[name]])) })
}
