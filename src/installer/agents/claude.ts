import { Effect, Option } from "effect"
import { HOOK_EVENTS } from "../../capture/hook-event.js"
import {
  CLAUDE_BIN_VARIABLE,
  CLAUDE_INSTALL_COMMAND,
  ClaudeCli,
  type ClaudeCommandFailed,
  type ClaudeMcpServer,
  type ClaudeNotFound,
  claudeConfigFile,
  describeClaudeEntry,
  sameClaudeServer
} from "../../claude/claude-cli.js"
import {
  CLAUDE_MANAGED_SETTINGS,
  claudeSettingsFile,
  hooksDisabled,
  managedHooksRestriction
} from "../../claude/settings-file.js"
import type { HooksDocument } from "../../codex/hooks-file.js"
import { SafeFs } from "../../fs/safe-fs.js"
import { Paths } from "../../paths/paths.js"
import { claudeFormat } from "../../transcripts/formats/claude-format.js"
import { fail } from "../step.js"
import { mcpCliOverAgentCli, skillCheckedOnDisk } from "./agent-cli-mcp.js"
import {
  type AgentIntegration,
  EVENTS_IN_SECONDS,
  type FoundServer,
  type HooksAgent,
  type HooksRecord,
  type McpRecord,
  type SkillRecord
} from "./agent-integration.js"
import { recordList } from "./manifest-records.js"
import { shellWord } from "./shell-word.js"

/** The name blctx's MCP server has in Claude Code (its tools are `mcp__base-layer-context__*`). */
export const CLAUDE_MCP_NAME = "base-layer-context"

/**
 * `claude mcp`, at user scope, never by editing `~/.claude.json`. `claude mcp get` starts the
 * server: an entry is confirmed only when Claude reports it connected.
 */
const mcpCli = Effect.gen(function* () {
  const claude = yield* ClaudeCli
  const paths = yield* Paths
  const fs = yield* SafeFs

  const configFileOf = (home: string) => claudeConfigFile(home, paths.home)
  const command = (home: string, args: string) =>
    configFileOf(home) === `${paths.home}/.claude.json`
      ? `claude ${args}`
      : `CLAUDE_CONFIG_DIR=${shellWord(home)} claude ${args}`
  const removeHint = (home: string, entry?: ClaudeMcpServer) =>
    command(home, `mcp remove ${entry === undefined || entry.userScope ? "--scope user " : ""}${CLAUDE_MCP_NAME}`)

  const foundServer =
    (home: string) =>
    (entry: ClaudeMcpServer): FoundServer => ({
      runs: (server) => sameClaudeServer(entry, server),
      description: describeClaudeEntry(entry),
      report: `${describeClaudeEntry(entry)}, ${entry.status || "no status"}`,
      removeCommand: removeHint(home, entry),
      confirm: (programs, next) =>
        Effect.gen(function* () {
          yield* programs
          if (!entry.connected) {
            return yield* fail(
              `Claude Code could not start ${CLAUDE_MCP_NAME} (${entry.status || "no status"}${Option.match(entry.issue, { onNone: () => "", onSome: (i) => `: ${i}` })})`,
              `Check the daemon (blctx status --step service_health) and what Claude reports (${command(home, `mcp get ${CLAUDE_MCP_NAME}`)}), then run: ${next}`
            )
          }
          return "; Claude reports it connected"
        })
    })

  return mcpCliOverAgentCli({
    port: claude,
    product: "Claude Code",
    installCommand: CLAUDE_INSTALL_COMMAND,
    bin: "claude",
    binVariable: CLAUDE_BIN_VARIABLE,
    why: "blctx registers its MCP server through Claude Code's CLI",
    isNotFound: (e): e is ClaudeNotFound => e._tag === "ClaudeNotFound",
    homeOf: (e: ClaudeCommandFailed) => e.claudeHome,
    configFileOf,
    command,
    removeHint,
    present: (home) => fs.exists(configFileOf(home)),
    foundServer
  })
})

/** Claude Code has no command that lists skills without starting a session: the file itself is checked. */
const skillDiscovery = Effect.map(Paths, (paths) => skillCheckedOnDisk(`Claude Code configuration ${paths.claudeHome}`))

/**
 * Claude Code asks no approval for hooks in user settings (`claude -p` runs them at once); a
 * settings.json with `"disableAllHooks": true`, or managed settings that allow no user hooks,
 * run none, which blctx reports and never changes.
 */
const hooksAgent = Effect.map(SafeFs, (fs) => {
  /** What the administrator's managed settings say of user hooks; an absent or unreadable file says nothing. */
  const managedRestriction = fs.readText(CLAUDE_MANAGED_SETTINGS).pipe(
    Effect.map(managedHooksRestriction),
    Effect.orElseSucceed(() => undefined)
  )
  const enabled = (doc: HooksDocument, file: string, decline: string) =>
    Effect.gen(function* () {
      const managed = yield* managedRestriction
      if (managed !== undefined) {
        return yield* fail(
          `Claude Code's managed settings (${CLAUDE_MANAGED_SETTINGS}) set "${managed}": true, so it runs none of the hooks in ${file}, blctx's included`,
          `Ask whoever manages this machine's Claude Code settings to allow user hooks, or go without them: ${decline}`
        )
      }
      if (hooksDisabled(doc)) {
        return yield* fail(
          `${file} sets "disableAllHooks": true, so Claude Code runs none of blctx's hooks`,
          `Remove "disableAllHooks" from ${file} (blctx never changes it), or go without the hooks: ${decline}`
        )
      }
    })
  const agent: HooksAgent = {
    beforeWrite: () => Effect.void,
    enabled,
    approval: {
      asks: false,
      said: {
        said: "Claude Code runs them without approval",
        pending: [],
        summary: `${HOOK_EVENTS.length} hooks in place`
      }
    }
  }
  return agent
})

/**
 * Claude Code: `claude mcp` registrations at user scope, skills under its configuration
 * directory, hooks in its user settings.json. The hook handler is Codex's own
 * (`dist/bin/blctx-hook.cjs`); it knows it runs for Claude Code from the generation in its command.
 */
export const claudeIntegration: AgentIntegration<ClaudeCli | Paths | SafeFs, Paths, SafeFs> = {
  target: "claude",
  name: "Claude Code",
  span: "Claude",
  transcripts: claudeFormat,
  homeOf: (paths) => paths.claudeHome,
  steps: { mcp: "claude_mcp", skills: "claude_skills", hooks: "claude_hooks" },
  mcp: {
    name: CLAUDE_MCP_NAME,
    records: recordList<McpRecord>("claude_mcp", { home: "claude_home" }),
    scope: " at user scope",
    addReplaces: false,
    cli: mcpCli,
    say: {
      cli: "claude",
      reporter: "Claude",
      registeredIn: (configFile, note) => `with Claude Code (${configFile}${note === undefined ? "" : `; ${note}`})`,
      holder: () => "Claude Code",
      readbackIn: () => "",
      getArgs: (name) => `mcp get ${name}`
    }
  },
  skills: {
    records: recordList<SkillRecord>("claude_skills", { home: "claude_home" }),
    homeVariable: "CLAUDE_CONFIG_DIR",
    uninstall: "blctx uninstall claude",
    missingHome: (home, reinstall) => ({
      detail: `Claude Code's configuration directory ${home} does not exist`,
      remediation: `Start Claude Code once (or create the folder: mkdir -p ${home}), then run: ${reinstall}`
    }),
    // Claude Code reads personal skills from its configuration directory only.
    otherRoots: () => [],
    discovery: skillDiscovery
  },
  hooks: {
    records: recordList<HooksRecord>("claude_hooks", { home: "claude_home", file: "settings_file" }),
    events: EVENTS_IN_SECONDS,
    choice: "claude_hooks",
    fileOf: claudeSettingsFile,
    fileName: "settings.json",
    unparsable: "Claude Code cannot load its settings from it as it is",
    optional: "optional Claude Code hooks",
    missingHome: (home, reinstall) => ({
      detail: `Claude Code's configuration folder ${home} does not exist, so there is no Claude Code to add hooks to`,
      remediation: `Run Claude Code once (or set CLAUDE_CONFIG_DIR to its folder), then run: ${reinstall}`
    }),
    unchecked: `${HOOK_EVENTS.length} hooks in place`,
    agent: hooksAgent
  }
}
