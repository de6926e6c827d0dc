import { Schema } from "effect"
import { AGENT_CONCERNS, AGENT_NAMES, type AgentName } from "../domain/agent-names.js"
import { InstallationId } from "../domain/installation-id.js"
import {
  type HomeField,
  type HooksChoiceKey,
  type HooksFileField,
  homeField,
  hooksChoiceKey,
  hooksFileField,
  type RecordsKey,
  recordsKey
} from "./manifest-keys.js"

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

/**
 * The generation the hook commands carry (a handler of another generation records nothing) and
 * the entries blctx owns: each its event and the exact command it runs.
 */
const HooksRegistrationFields = {
  generation: Schema.UUID,
  entries: Schema.Array(Schema.Struct({ event: Schema.String, command: Schema.String }))
}

/**
 * An agent's three lists of records (MCP registrations, skills, hooks), its home field named
 * `home` and its hooks file `hooksFile`. Each list is optional: manifests written before the
 * agent's steps read as having none.
 */
const agentRecords = <H extends string, F extends string>(home: H, hooksFile: F) => ({
  mcp: Schema.optional(Schema.Array(inAgentHome(home, McpRegistrationFields))),
  skills: Schema.optional(Schema.Array(inAgentHome(home, SkillInstallationFields))),
  hooks: Schema.optional(
    Schema.Array(
      inAgentHome(home, {
        ...({ [hooksFile]: AbsolutePath } as { readonly [K in F]: typeof AbsolutePath }),
        ...HooksRegistrationFields
      })
    )
  )
})

/**
 * Each agent's lists of records, under the names manifest-keys.ts derives from its name. Codex:
 * `codex mcp add` registrations, skills under $CODEX_HOME/skills, hooks in its hooks.json. Claude
 * Code: registrations at user scope, where `claude_home` is CLAUDE_CONFIG_DIR at registration
 * (default `~/.claude`); hooks merged into its settings.json. Gemini CLI: registrations at user
 * scope, where `gemini_home` is its folder at registration (`$GEMINI_CLI_HOME/.gemini`, default
 * `~/.gemini`); skills under it; hooks merged into its settings.json.
 */
type AgentRecords<A extends AgentName> = ReturnType<typeof agentRecords<HomeField<A>, HooksFileField<A>>>
type AgentRecordFields = {
  readonly [K in RecordsKey]: K extends RecordsKey<infer A, infer C> ? AgentRecords<A>[C] : never
}
const agentRecordFields = Object.fromEntries(
  AGENT_NAMES.flatMap((agent) => {
    const records = agentRecords(homeField(agent), hooksFileField(agent))
    return AGENT_CONCERNS.map((concern) => [recordsKey(agent, concern), records[concern]])
  })
) as unknown as AgentRecordFields

/** The person's choice about each agent's hooks, under its key (`hooks` for Codex's, `claude_hooks`). */
type HooksChoiceFields = {
  readonly [A in AgentName as HooksChoiceKey<A>]: Schema.optional<typeof HooksDecision>
}
const hooksChoiceFields = Object.fromEntries(
  AGENT_NAMES.map((agent) => [hooksChoiceKey(agent), Schema.optional(HooksDecision)])
) as unknown as HooksChoiceFields

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
   * for Codex's, `claude_hooks` for Claude Code's, `gemini_hooks` for Gemini CLI's, each agent's
   * choice its own.
   */
  choices: Schema.optionalWith(Schema.Struct(hooksChoiceFields), { default: () => ({}) }),
  /**
   * What blctx registered with each agent (its MCP server, one per agent home; its skill; its
   * hooks). Recorded before the registration is written, so an interrupted install is retried as
   * blctx's own.
   */
  ...agentRecordFields
}) {}

/** Only the version field, read first so an unknown version is reported as such, not as corruption. */
export const ManifestVersionProbe = Schema.Struct({ version: Schema.Unknown })
