import { spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"

const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..", "..")
/** The built programs: acceptance tests always run what `npm run build` produced. */
export const builtProgram = (name: "cli" | "daemon" | "mcp" | "hook") =>
  NodePath.join(root, "dist", "programs", `${name}.js`)

/** The bundled entries `npm run build` writes to dist/bin/: what the package's users and agents run. */
export const bundledProgram = (name: "blctx" | "blctx-mcp") => NodePath.join(root, "dist", "bin", `${name}.mjs`)

/**
 * The test-only programs `npm run build` bundles from acceptance/programs/ into dist/test-programs/
 * (never published): `cli-fake-systemd` is blctx with the fake systemd composed in.
 */
export const testProgram = (name: "cli-fake-systemd" | "fake-systemd-manager" | "cli-held-daemon") =>
  NodePath.join(root, "dist", "test-programs", `${name}.mjs`)

/**
 * The arguments blctx gives its daemon and registers for its MCP server: the installation id and
 * the home's four XDG roots, in the daemon's order.
 */
export const installationArgs = (
  home: {
    readonly xdg: { readonly data: string; readonly config: string; readonly cache: string; readonly state: string }
  },
  installationId: string
) => [
  "--installation-id",
  installationId,
  "--data-home",
  home.xdg.data,
  "--config-home",
  home.xdg.config,
  "--cache-home",
  home.xdg.cache,
  "--state-home",
  home.xdg.state
]

export interface RunResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** A fresh HOME with its own XDG directories and CODEX_HOME, removed by `dispose`. */
export interface IsolatedHome {
  readonly home: string
  readonly env: NodeJS.ProcessEnv
  readonly xdg: { readonly data: string; readonly config: string; readonly cache: string; readonly state: string }
  readonly codexHome: string
  /** Runs the built `blctx` (or the home's own CLI entry) from `/` with this home's environment. */
  readonly blctx: (
    args: ReadonlyArray<string>,
    options?: { readonly input?: string; readonly env?: NodeJS.ProcessEnv }
  ) => Promise<RunResult>
  readonly dispose: () => void
}

export const runProcess = (
  command: string,
  args: ReadonlyArray<string>,
  options: { readonly env: NodeJS.ProcessEnv; readonly cwd?: string; readonly input?: string }
): Promise<RunResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: options.env, cwd: options.cwd ?? "/", stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d
    })
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d
    })
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(options.input ?? "")
  })

/** `cli`: the entry point `blctx` runs (default the built product CLI; a test program for fakes). */
export const makeIsolatedHome = (options?: { readonly cli?: string }): IsolatedHome => {
  const cli = options?.cli ?? builtProgram("cli")
  const home = realpathSync(mkdtempSync(NodePath.join(tmpdir(), "blctx-home-")))
  const xdg = {
    data: NodePath.join(home, "xdg", "data"),
    config: NodePath.join(home, "xdg", "config"),
    cache: NodePath.join(home, "xdg", "cache"),
    state: NodePath.join(home, "xdg", "state")
  }
  const codexHome = NodePath.join(home, ".codex")
  mkdirSync(NodePath.join(home, "xdg"), { mode: 0o700 })
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    XDG_DATA_HOME: xdg.data,
    XDG_CONFIG_HOME: xdg.config,
    XDG_CACHE_HOME: xdg.cache,
    XDG_STATE_HOME: xdg.state,
    CODEX_HOME: codexHome,
    NO_COLOR: "1"
  }
  return {
    home,
    env,
    xdg,
    codexHome,
    blctx: (args, options) =>
      runProcess(process.execPath, [cli, ...args], {
        env: { ...env, ...options?.env },
        ...(options?.input === undefined ? {} : { input: options.input })
      }),
    dispose: () => rmSync(home, { recursive: true, force: true })
  }
}

/** Parses stdout as exactly one JSON document (fails the test otherwise). */
export const parseJson = <A = unknown>(result: RunResult): A => JSON.parse(result.stdout) as A
