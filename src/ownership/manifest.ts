import { Schema } from "effect"
import { InstallationId } from "../domain/installation-id.js"

/** The manifest format this build reads and writes. */
export const MANIFEST_VERSION = 1

const AbsolutePath = Schema.String.pipe(
  Schema.filter((p) => p.startsWith("/"), { message: () => "must be an absolute path" })
)

export const HooksDecision = Schema.Literal("installed", "declined")
export type HooksDecision = typeof HooksDecision.Type

/**
 * A record's fields with the agent's home first, under the agent's own name (`codex_home`,
 * `claude_home`): each agent's records keep the field names they were written with.
 */
const inAgentHome = <H extends string, F extends Schema.Struct.Fields>(home: H, fields: F) =>
  Schema.Struct({ ...({ [home]: AbsolutePath } as { readonly [K in H]: typeof AbsolutePath }), ...fields })

/**
 * A registration blctx made with an agent's CLI: where (the agent home at that time, so it can
 * be checked and removed there even after CODEX_HOME or CLAUDE_CONFIG_DIR changed), under which
 * name, and what it runs. An entry of that name is blctx's only while it still runs exactly this.
 */
const McpRegistrationFields = {
  name: Schema.String,
  command: AbsolutePath,
  args: Schema.Array(Schema.String)
}

/**
 * The bundled skill blctx wrote into an agent's skills root: the root and exact file (recorded, so
 * uninstall finds it even after the agent's home changed), the blctx version that wrote it and the
 * file's SHA-256. The file is blctx's only while its content still hashes to this.
 */
const SkillInstallationFields = {
  root: AbsolutePath,
  path: AbsolutePath,
  version: Schema.String,
  sha256: Schema.String
}

/** One hook entry blctx added to an agent's hooks file: its event and the exact command it runs. */
export const CodexHookEntry = Schema.Struct({ event: Schema.String, command: Schema.String })

/** The generation the hook commands carry (a handler of another generation records nothing) and the entries blctx owns. */
const HooksRegistrationFields = {
  generation: Schema.UUID,
  entries: Schema.Array(CodexHookEntry)
}

/** blctx's MCP server in a Codex config (`codex mcp add`). */
export const CodexMcpRegistration = inAgentHome("codex_home", McpRegistrationFields)
export type CodexMcpRegistration = typeof CodexMcpRegistration.Type

export const CodexSkillInstallation = inAgentHome("codex_home", SkillInstallationFields)
export type CodexSkillInstallation = typeof CodexSkillInstallation.Type

/** The lifecycle hooks blctx registered in one Codex home's hooks.json. */
export const CodexHooksRegistration = inAgentHome("codex_home", {
  hooks_file: AbsolutePath,
  ...HooksRegistrationFields
})
export type CodexHooksRegistration = typeof CodexHooksRegistration.Type

/**
 * blctx's MCP server registered with Claude Code at user scope (`claude mcp add --scope user`);
 * `claude_home` is CLAUDE_CONFIG_DIR at registration (default `~/.claude`).
 */
export const ClaudeMcpRegistration = inAgentHome("claude_home", McpRegistrationFields)
export type ClaudeMcpRegistration = typeof ClaudeMcpRegistration.Type

export const ClaudeSkillInstallation = inAgentHome("claude_home", SkillInstallationFields)
export type ClaudeSkillInstallation = typeof ClaudeSkillInstallation.Type

/** The hook entries blctx merged into a Claude Code settings.json. */
export const ClaudeHooksRegistration = inAgentHome("claude_home", {
  settings_file: AbsolutePath,
  ...HooksRegistrationFields
})
export type ClaudeHooksRegistration = typeof ClaudeHooksRegistration.Type

/**
 * `installation.json`: what blctx owns on this machine. Only paths listed here are ever
 * removed by `uninstall --purge`; everything else is left alone.
 */
export class Manifest extends Schema.Class<Manifest>("Manifest")({
  version: Schema.Literal(MANIFEST_VERSION),
  installation_id: InstallationId,
  state: Schema.Literal("active", "inactive"),
  owned_files: Schema.Array(AbsolutePath),
  created_directories: Schema.Array(AbsolutePath),
  node: AbsolutePath,
  cli: AbsolutePath,
  created_at: Schema.String,
  updated_at: Schema.String,
  /**
   * Explicit choices a person made at install time (e.g. declining the optional hooks): `hooks`
   * for Codex's, `claude_hooks` for Claude Code's, each agent's choice its own.
   */
  choices: Schema.optionalWith(
    Schema.Struct({ hooks: Schema.optional(HooksDecision), claude_hooks: Schema.optional(HooksDecision) }),
    { default: () => ({}) }
  ),
  /**
   * MCP server registrations blctx wrote with `codex mcp add`, one per Codex home. Recorded
   * before the registration is written, so an interrupted install is retried as blctx's own.
   * Optional: manifests written before the codex_mcp step read as having none.
   */
  codex_mcp: Schema.optional(Schema.Array(CodexMcpRegistration)),
  /** The bundled skill files blctx wrote (codex_skills step). Optional, as codex_mcp. */
  codex_skills: Schema.optional(Schema.Array(CodexSkillInstallation)),
  /** The hook entries blctx registered (codex_hooks step). Optional, as codex_mcp. */
  codex_hooks: Schema.optional(Schema.Array(CodexHooksRegistration)),
  /** Claude Code: the MCP registration, skill and hooks (`blctx install claude`). Optional, as above. */
  claude_mcp: Schema.optional(Schema.Array(ClaudeMcpRegistration)),
  claude_skills: Schema.optional(Schema.Array(ClaudeSkillInstallation)),
  claude_hooks: Schema.optional(Schema.Array(ClaudeHooksRegistration))
}) {}

/** Only the version field, read first so an unknown version is reported as such, not as corruption. */
export const ManifestVersionProbe = Schema.Struct({ version: Schema.Unknown })
