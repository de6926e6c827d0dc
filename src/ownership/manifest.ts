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
 * A registration blctx made in a Codex config: where (the Codex home at that time, so it can be
 * checked and removed there even after CODEX_HOME changed), under which name, and what it runs.
 * An entry of that name is blctx's only while it still runs exactly this.
 */
export const CodexMcpRegistration = Schema.Struct({
  codex_home: AbsolutePath,
  name: Schema.String,
  command: AbsolutePath,
  args: Schema.Array(Schema.String)
})
export type CodexMcpRegistration = typeof CodexMcpRegistration.Type

/**
 * The bundled skill blctx wrote into a Codex skills root: the root and exact file (recorded, so
 * uninstall finds it even after CODEX_HOME changed), the blctx version that wrote it and the
 * file's SHA-256. The file is blctx's only while its content still hashes to this.
 */
export const CodexSkillInstallation = Schema.Struct({
  codex_home: AbsolutePath,
  root: AbsolutePath,
  path: AbsolutePath,
  version: Schema.String,
  sha256: Schema.String
})
export type CodexSkillInstallation = typeof CodexSkillInstallation.Type

/** One hook entry blctx added to a Codex hooks.json: its event and the exact command it runs. */
export const CodexHookEntry = Schema.Struct({ event: Schema.String, command: Schema.String })

/**
 * The lifecycle hooks blctx registered in one Codex home: the hooks file, the generation its
 * commands carry (a handler of another generation records nothing) and the entries it owns.
 */
export const CodexHooksRegistration = Schema.Struct({
  codex_home: AbsolutePath,
  hooks_file: AbsolutePath,
  generation: Schema.UUID,
  entries: Schema.Array(CodexHookEntry)
})
export type CodexHooksRegistration = typeof CodexHooksRegistration.Type

/** blctx's MCP server registered with Claude Code at user scope (`claude mcp add --scope user`). */
export const ClaudeMcpRegistration = Schema.Struct({
  /** CLAUDE_CONFIG_DIR at registration (default `~/.claude`): which Claude Code configuration holds it. */
  claude_home: AbsolutePath,
  name: Schema.String,
  command: AbsolutePath,
  args: Schema.Array(Schema.String)
})
export type ClaudeMcpRegistration = typeof ClaudeMcpRegistration.Type

/** The bundled skill written under a Claude Code skills root; owned while it hashes to `sha256`. */
export const ClaudeSkillInstallation = Schema.Struct({
  claude_home: AbsolutePath,
  root: AbsolutePath,
  path: AbsolutePath,
  version: Schema.String,
  sha256: Schema.String
})
export type ClaudeSkillInstallation = typeof ClaudeSkillInstallation.Type

/** The hook entries blctx merged into a Claude Code settings.json, with their generation. */
export const ClaudeHooksRegistration = Schema.Struct({
  claude_home: AbsolutePath,
  settings_file: AbsolutePath,
  generation: Schema.UUID,
  entries: Schema.Array(CodexHookEntry)
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
