import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { runAgentCli } from "./agent-run.js"
import type { IsolatedHome, RunResult } from "./isolated-home.js"

/**
 * Test support: the real Gemini CLI (`@google/gemini-cli`, installed apart in test-tools/ by
 * `npm run test:tools`), run offline in a test home against a scripted loopback Gemini API
 * (support/scripted-gemini-server.ts, which records why each setting below is needed). Its
 * folder is the home's `~/.gemini` (no GEMINI_CLI_HOME), so blctx and the CLI agree on it; it
 * keeps each session as `~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl`.
 */
const root = NodePath.resolve(import.meta.dirname, "..", "..")
export const geminiBin = NodePath.join(root, "test-tools", "node_modules", ".bin", "gemini")
/** The CLI, or a failure that says how to get it: CI installs test-tools, so a missing CLI never skips. */
export const requireGemini = () => {
  if (!Fs.existsSync(geminiBin)) throw new Error(`${geminiBin} is missing: run npm run test:tools`)
  return geminiBin
}

/** A model named outright: `auto` would first ask a routing classifier for a score. */
export const GEMINI_TEST_MODEL = "gemini-2.5-flash"

/** Gemini CLI's folder in a test home. */
export const geminiHomeOf = (h: Pick<IsolatedHome, "home">) => NodePath.join(h.home, ".gemini")
export const geminiSettingsOf = (h: Pick<IsolatedHome, "home">) => NodePath.join(geminiHomeOf(h), "settings.json")
/** Where the CLI keeps the sessions of every project: `tmp/<project>/chats/`. */
export const geminiSessionsRootOf = (h: Pick<IsolatedHome, "home">) => NodePath.join(geminiHomeOf(h), "tmp")

/** The settings that make a headless run use the scripted API and stay offline. */
export const OFFLINE_SETTINGS = {
  security: { auth: { selectedType: "gemini-api-key" } },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
  ide: { enabled: false }
} as const

/**
 * Merges the offline settings into the home's `~/.gemini/settings.json`, keeping what is there
 * (an MCP registration `blctx install gemini` wrote, say).
 */
export const writeOfflineSettings = (h: Pick<IsolatedHome, "home">) => {
  const path = geminiSettingsOf(h)
  Fs.mkdirSync(NodePath.dirname(path), { recursive: true })
  const existing = Fs.existsSync(path) ? (JSON.parse(Fs.readFileSync(path, "utf8")) as Record<string, unknown>) : {}
  Fs.writeFileSync(path, `${JSON.stringify({ ...existing, ...OFFLINE_SETTINGS }, null, 2)}\n`)
}

/** Every session file the CLI wrote under the home, newest last by name. */
export const geminiSessionFiles = (h: Pick<IsolatedHome, "home">): ReadonlyArray<string> => {
  const rootDir = geminiSessionsRootOf(h)
  if (!Fs.existsSync(rootDir)) return []
  return Fs.readdirSync(rootDir, { recursive: true, encoding: "utf8" })
    .filter((p) => NodePath.basename(p).startsWith("session-") && p.endsWith(".jsonl"))
    .map((p) => NodePath.join(rootDir, p))
    .sort()
}

/** What `gemini -p … --output-format json` prints. */
export interface GeminiJsonOutput {
  readonly session_id?: string
  readonly response?: string
  readonly error?: { readonly type: string; readonly message: string; readonly code: number }
}

/**
 * Runs `gemini` with this home's environment, the scripted API, stdin closed, and nothing else
 * reaching the network. Its process group (the CLI and the MCP servers it starts) is killed if it
 * outlives the bound. Call `writeOfflineSettings` once before.
 */
export const runGemini = (
  h: Pick<IsolatedHome, "env" | "home">,
  baseUrl: string,
  args: ReadonlyArray<string>,
  cwd = h.home,
  env: Readonly<Record<string, string>> = {}
) =>
  runAgentCli(
    requireGemini(),
    [...args],
    {
      ...h.env,
      ...env,
      GOOGLE_GEMINI_BASE_URL: baseUrl,
      GEMINI_API_KEY: "scripted-gemini-key",
      // The CLI relaunches itself with a bigger heap unless told it is already a child.
      GEMINI_CLI_NO_RELAUNCH: "true",
      NO_BROWSER: "true"
    },
    cwd
  )

/** One headless turn: `gemini -p <prompt> --output-format json --skip-trust --model <test model>`. */
export const geminiTurn = (
  h: Pick<IsolatedHome, "env" | "home">,
  baseUrl: string,
  prompt: string,
  options: { readonly cwd?: string; readonly extraArgs?: ReadonlyArray<string> } = {}
) =>
  runGemini(
    h,
    baseUrl,
    [
      "-p",
      prompt,
      "--output-format",
      "json",
      "--skip-trust",
      "--model",
      GEMINI_TEST_MODEL,
      ...(options.extraArgs ?? [])
    ],
    options.cwd ?? h.home
  )

/** The JSON the turn printed, or a failure naming what it printed instead. */
export const geminiOutput = (run: RunResult): GeminiJsonOutput => {
  try {
    return JSON.parse(run.stdout) as GeminiJsonOutput
  } catch {
    throw new Error(`gemini printed no JSON (exit ${run.code}):\n${run.stdout}\n${run.stderr}`)
  }
}
