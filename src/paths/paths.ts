import * as NodePath from "node:path"
import { Config, Effect, Layer, Option } from "effect"

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
  readonly database: string
  readonly manifest: string
}

export const APP_DIR = "blctx"

const absoluteOr = (value: Option.Option<string>, fallback: string): string =>
  Option.match(value, {
    onNone: () => fallback,
    onSome: (v) => (v !== "" && NodePath.isAbsolute(v) ? NodePath.normalize(v) : fallback)
  })

export interface PathInputs {
  readonly home: string
  readonly XDG_DATA_HOME?: string | undefined
  readonly XDG_CONFIG_HOME?: string | undefined
  readonly XDG_CACHE_HOME?: string | undefined
  readonly XDG_STATE_HOME?: string | undefined
  readonly CODEX_HOME?: string | undefined
  readonly CLAUDE_CONFIG_DIR?: string | undefined
}

/** Pure resolution, so the rules are testable without touching the environment. */
export const resolvePaths = (input: PathInputs): ResolvedPaths => {
  const home = input.home
  const pick = (v: string | undefined, fallback: string) => absoluteOr(Option.fromNullable(v), fallback)
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
    database: NodePath.join(dataDir, "context.db"),
    manifest: NodePath.join(stateDir, "installation.json")
  }
}

const optionalEnv = (name: string) => Config.option(Config.string(name)).pipe(Config.map(Option.getOrUndefined))

/** The paths of this process, read once from its environment. */
export class Paths extends Effect.Service<Paths>()("blctx/Paths", {
  effect: Effect.gen(function* () {
    const home = yield* Config.string("HOME").pipe(
      Config.validate({ message: "HOME must be an absolute path", validation: (h) => NodePath.isAbsolute(h) })
    )
    return resolvePaths({
      home,
      XDG_DATA_HOME: yield* optionalEnv("XDG_DATA_HOME"),
      XDG_CONFIG_HOME: yield* optionalEnv("XDG_CONFIG_HOME"),
      XDG_CACHE_HOME: yield* optionalEnv("XDG_CACHE_HOME"),
      XDG_STATE_HOME: yield* optionalEnv("XDG_STATE_HOME"),
      CODEX_HOME: yield* optionalEnv("CODEX_HOME"),
      CLAUDE_CONFIG_DIR: yield* optionalEnv("CLAUDE_CONFIG_DIR")
    })
  })
}) {
  /** A Paths layer from explicit inputs (tests, and the daemon which takes its roots as arguments). */
  static layerFrom = (input: PathInputs) => Layer.succeed(Paths, Paths.make(resolvePaths(input)))
}
