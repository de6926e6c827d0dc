import * as NodePath from "node:path"
import { Effect } from "effect"
import { HOOK_EVENTS } from "../../capture/hook-event.js"
import type { HooksDocument } from "../../codex/hooks-file.js"
import { SafeFs } from "../../fs/safe-fs.js"
import {
  describeGeminiEntry,
  GEMINI_BIN_VARIABLE,
  GEMINI_INSTALL_COMMAND,
  GeminiCli,
  type GeminiCommandFailed,
  type GeminiMcpServer,
  type GeminiNotFound,
  geminiCliHome,
  geminiSettingsFile,
  sameGeminiServer
} from "../../gemini/gemini-cli.js"
import { Paths } from "../../paths/paths.js"
import { geminiFormat } from "../../transcripts/formats/gemini-format.js"
import { fail } from "../step.js"
import { mcpCliOverAgentCli, skillCheckedOnDisk } from "./agent-cli-mcp.js"
import type {
  AgentIntegration,
  FoundServer,
  HooksAgent,
  HooksRecord,
  McpRecord,
  SkillRecord
} from "./agent-integration.js"
import { recordList } from "./manifest-records.js"
import { shellWord } from "./shell-word.js"

/** The name blctx's MCP server has in Gemini CLI. */
export const GEMINI_MCP_NAME = "base-layer-context"

/** Folder trust is the person's: Gemini starts MCP servers and runs hooks only in folders they trust. */
const TRUST_NOTE = "Gemini CLI uses it in folders you trust"

/** A `gemini` command as a person types it for this Gemini folder. */
const commandFor = (paths: { readonly home: string }) => (home: string, args: string) =>
  NodePath.resolve(home) === NodePath.join(paths.home, ".gemini")
    ? `gemini ${args}`
    : `GEMINI_CLI_HOME=${shellWord(geminiCliHome(home))} gemini ${args}`

/**
 * `gemini mcp` at user scope, never by editing settings.json. `gemini mcp list` starts the
 * server: an entry is confirmed only when Gemini reports it connected.
 */
const mcpCli = Effect.gen(function* () {
  const gemini = yield* GeminiCli
  const paths = yield* Paths
  const fs = yield* SafeFs
  const command = commandFor(paths)
  const removeHint = (home: string) => command(home, `mcp remove --scope user ${GEMINI_MCP_NAME}`)

  const foundServer =
    (home: string) =>
    (entry: GeminiMcpServer): FoundServer => ({
      runs: (server) => sameGeminiServer(entry, server),
      description: describeGeminiEntry(entry),
      report: `${describeGeminiEntry(entry)}, ${entry.status}`,
      removeCommand: removeHint(home),
      confirm: (programs, next) =>
        Effect.gen(function* () {
          yield* programs
          if (!entry.connected) {
            return yield* fail(
              `Gemini CLI could not start ${GEMINI_MCP_NAME} (${entry.status})`,
              `Check the daemon (blctx status --step service_health) and what Gemini reports (${command(home, "mcp list")}), then run: ${next}`
            )
          }
          return `; Gemini reports it connected (${TRUST_NOTE})`
        })
    })

  return mcpCliOverAgentCli({
    port: gemini,
    product: "Gemini CLI",
    installCommand: GEMINI_INSTALL_COMMAND,
    bin: "gemini",
    binVariable: GEMINI_BIN_VARIABLE,
    why: "blctx registers its MCP server through Gemini CLI",
    isNotFound: (e): e is GeminiNotFound => e._tag === "GeminiNotFound",
    homeOf: (e: GeminiCommandFailed) => e.geminiHome,
    configFileOf: geminiSettingsFile,
    command,
    removeHint,
    present: (home) => fs.exists(geminiSettingsFile(home)),
    foundServer
  })
})

/**
 * The skill file itself is checked, as for Claude Code: `gemini skills list` would tell, but it
 * starts a whole session to answer and records it in the person's history (a
 * `skills-list-session` chat under ~/.gemini/tmp, checked with 0.61), so every status would add
 * one. The file's place is the one Gemini documents for user skills.
 */
const skillDiscovery = Effect.map(Paths, (paths) => skillCheckedOnDisk(`Gemini CLI folder ${paths.geminiHome}`))

/** Gemini's switches for hooks in settings.json: `hooksConfig.enabled` and the `hooksConfig.disabled` names. */
const hooksConfigOf = (doc: HooksDocument) => {
  const config = (doc as { readonly hooksConfig?: unknown }).hooksConfig
  if (typeof config !== "object" || config === null) return { enabled: true, disabled: [] as ReadonlyArray<unknown> }
  const { enabled, disabled } = config as { readonly enabled?: unknown; readonly disabled?: unknown }
  return { enabled: enabled !== false, disabled: Array.isArray(disabled) ? disabled : [] }
}

/**
 * Gemini CLI runs user hooks without asking (in folders the person trusts); `"hooksConfig":
 * {"enabled": false}` runs none, which blctx reports and never changes.
 */
const hooksAgent = Effect.succeed<HooksAgent>({
  beforeWrite: () => Effect.void,
  enabled: (doc, file, decline) =>
    hooksConfigOf(doc).enabled
      ? Effect.void
      : fail(
          `${file} sets "hooksConfig": {"enabled": false}, so Gemini CLI runs none of blctx's hooks`,
          `Remove "enabled": false from hooksConfig in ${file} (blctx never changes it), or go without the hooks: ${decline}`
        ),
  approval: {
    asks: false,
    said: {
      said: `Gemini CLI runs them without approval (in folders you trust)`,
      pending: [],
      summary: `${HOOK_EVENTS.length} hooks in place`
    }
  }
})

/**
 * Gemini CLI: `gemini mcp` registrations at user scope in its settings.json, the skill under its
 * folder's skills/, hooks in the same settings.json. Its folder is `$GEMINI_CLI_HOME/.gemini`
 * (default `~/.gemini`). Gemini names the prompt and end-of-turn events BeforeAgent and
 * AfterAgent and counts hook timeouts in milliseconds.
 */
export const geminiIntegration: AgentIntegration<GeminiCli | Paths | SafeFs, Paths, never> = {
  target: "gemini",
  name: "Gemini CLI",
  span: "Gemini",
  transcripts: geminiFormat,
  homeOf: (paths) => paths.geminiHome,
  steps: { mcp: "gemini_mcp", skills: "gemini_skills", hooks: "gemini_hooks" },
  mcp: {
    name: GEMINI_MCP_NAME,
    records: recordList<McpRecord>("gemini_mcp", { home: "gemini_home" }),
    scope: " at user scope",
    addReplaces: true,
    cli: mcpCli,
    say: {
      cli: "gemini",
      reporter: "Gemini CLI",
      registeredIn: (configFile, note) => `with Gemini CLI (${configFile}${note === undefined ? "" : `; ${note}`})`,
      holder: () => "Gemini CLI",
      readbackIn: () => "",
      getArgs: () => "mcp list"
    }
  },
  skills: {
    records: recordList<SkillRecord>("gemini_skills", { home: "gemini_home" }),
    homeVariable: "GEMINI_CLI_HOME",
    uninstall: "blctx uninstall gemini",
    missingHome: (home, reinstall) => ({
      detail: `Gemini CLI's folder ${home} does not exist`,
      remediation: `Start Gemini CLI once (or create the folder: mkdir -p ${home}), then run: ${reinstall}`
    }),
    // Gemini also reads ~/.agents/skills (under GEMINI_CLI_HOME when set), and a copy there wins.
    otherRoots: (_paths, home) => [NodePath.join(geminiCliHome(home), ".agents", "skills")],
    discovery: skillDiscovery
  },
  hooks: {
    records: recordList<HooksRecord>("gemini_hooks", { home: "gemini_home", file: "settings_file" }),
    events: {
      SessionStart: { name: "SessionStart", timeout: 5_000 },
      UserPromptSubmit: { name: "BeforeAgent", timeout: 2_000 },
      Stop: { name: "AfterAgent", timeout: 5_000 },
      SessionEnd: { name: "SessionEnd", timeout: 1_000 }
    },
    choice: "gemini_hooks",
    fileOf: geminiSettingsFile,
    fileName: "settings.json",
    unparsable:
      "Gemini CLI reads it as JSON with comments, but blctx edits only plain JSON (a file with comments is left as it is)",
    optional: "optional Gemini CLI hooks",
    missingHome: (home, reinstall) => ({
      detail: `Gemini CLI's folder ${home} does not exist, so there is no Gemini CLI to add hooks to`,
      remediation: `Run Gemini CLI once (or: blctx install gemini, which registers the MCP server first), then run: ${reinstall}`
    }),
    unchecked: `${HOOK_EVENTS.length} hooks in place`,
    agent: hooksAgent
  }
}
