import * as NodePath from "node:path"
import { Effect, Option } from "effect"
import toml from "toml"
import { CodexAppServer, type CodexSkill } from "../../codex/codex-app-server.js"
import {
  CODEX_INSTALL_COMMAND,
  CodexCli,
  type CodexError,
  codexConfigFile,
  describeEntry,
  type McpServerEntry,
  sameStdioServer
} from "../../codex/codex-cli.js"
import { codexHooksFile, type HookEntry, inlineHookEvents } from "../../codex/hooks-file.js"
import {
  describeTrust,
  disabledEvents,
  judgeHooksListing,
  listingProblems,
  pendingEvents
} from "../../codex/hooks-listing.js"
import { SafeFs } from "../../fs/safe-fs.js"
import { Paths } from "../../paths/paths.js"
import { codexFormat } from "../../transcripts/formats/codex-format.js"
import { fail, type StepFailure, type StepRun } from "../step.js"
import {
  type AgentIntegration,
  EVENTS_IN_SECONDS,
  type FoundServer,
  type HooksAgent,
  type HooksRecord,
  type McpCli,
  type McpRecord,
  SKILL_NAME,
  type SkillDiscovery,
  type SkillRecord
} from "./agent-integration.js"
import { backupsOf, describeRewrite, preservingCodexConfig } from "./codex-config-backup.js"
import { recordList } from "./manifest-records.js"
import { shellWord } from "./shell-word.js"

/** The name blctx's MCP server has in Codex (Codex shows its tools as `mcp__base_layer_context__*`). */
export const CODEX_MCP_NAME = "base-layer-context"

/** What a person does once after install: Codex runs a hook only after they approve it. */
export const APPROVE_HOOKS = "approve on next Codex launch: open /hooks and trust the blctx hooks"

const SKILLS_STATUS = "blctx status --step codex_skills"

const codexCommand = (home: string, args: string) => `CODEX_HOME=${shellWord(home)} codex ${args}`

const eventsOf = (entries: ReadonlyArray<{ readonly event: string }>) => entries.map((e) => e.event).join(", ")

/**
 * A Codex error as a step failure: no codex says how to install it, and `why` blctx needs it; a
 * failed command says what to fix (`fix`), then `next`.
 */
const fromCodex =
  (why: string, fix: (codexHome: string) => string, next: string) =>
  (e: CodexError): StepFailure =>
    e._tag === "CodexNotFound"
      ? fail(
          `${e.message}; ${why}`,
          `Install Codex: ${CODEX_INSTALL_COMMAND} (or put codex on PATH), then run: ${next}`,
          e._tag
        )
      : fail(e.message, `${fix(e.codexHome)}, then run: ${next}`, e._tag)

const mcpFailure = (next: string) =>
  fromCodex(
    "blctx registers its MCP server through the Codex CLI",
    (home) => `Fix what codex reports in ${codexConfigFile(home)} (check with: ${codexCommand(home, "mcp list")})`,
    next
  )

/** An entry as Codex reports it: it must run blctx's command and be enabled. */
const foundServer =
  (home: string, name: string) =>
  (entry: McpServerEntry): FoundServer => ({
    runs: (server) => sameStdioServer(entry, server),
    description: describeEntry(entry),
    report: describeEntry(entry),
    removeCommand: codexCommand(home, `mcp remove ${name}`),
    confirm: (programs) =>
      entry.enabled
        ? Effect.as(programs, "")
        : fail(
            `${name} is disabled in ${codexConfigFile(home)}, so Codex does not start it`,
            `Remove \`enabled = false\` from [mcp_servers.${name}] in ${codexConfigFile(home)}.`
          )
  })

/**
 * `codex mcp` with config.toml backed up before each rewrite (Codex rewrites the whole file, and
 * its mode, when it adds or removes a server); the backups are the person's to keep.
 */
const mcpCli = Effect.gen(function* () {
  const codex = yield* CodexCli
  const fs = yield* SafeFs
  const preserving = (home: string, run: StepRun) => preservingCodexConfig(fs, codexConfigFile(home), run.progress)
  const cli: McpCli = {
    configFileOf: codexConfigFile,
    command: codexCommand,
    removeYourself: (home, name) => `delete [mcp_servers.${name}] from ${codexConfigFile(home)}`,
    present: (home) => fs.exists(home),
    locate: (next) =>
      codex.locate.pipe(
        Effect.mapError(mcpFailure(next)),
        Effect.map((found) => ({
          said: `codex ${Option.getOrElse(found.version, () => "of unknown version")} at ${found.path}`
        }))
      ),
    get: (home, name, next) =>
      codex
        .getMcpServer(home, name)
        .pipe(Effect.mapError(mcpFailure(next)), Effect.map(Option.map(foundServer(home, name)))),
    add: (home, server, run, next) =>
      preserving(
        home,
        run
      )(codex.addMcpServer(home, server).pipe(Effect.mapError(mcpFailure(next)))).pipe(
        Effect.map(([, rewrite]) => describeRewrite(rewrite))
      ),
    remove: (home, name, run, next) =>
      Effect.asVoid(preserving(home, run)(codex.removeMcpServer(home, name).pipe(Effect.mapError(mcpFailure(next))))),
    afterRemoval: (configFiles) =>
      Effect.map(
        Effect.forEach(configFiles, (config) => backupsOf(fs, config)),
        (found) => {
          const backups = found.flat()
          // A backup holds the person's own config.toml as it was: theirs to keep or delete.
          return backups.length === 0
            ? ""
            : `; kept the config.toml backups blctx made before Codex rewrote it (yours to delete): ${backups.join(", ")}`
        }
      )
  }
  return cli
})

/** Codex's own view of the skill (`codex app-server` `skills/list`): listed once, at the recorded path, enabled. */
const skillDiscovery = Effect.gen(function* () {
  const codex = yield* CodexAppServer
  const paths = yield* Paths
  const fs = yield* SafeFs
  const codexHome = paths.codexHome
  const configFile = codexConfigFile(codexHome)
  const NAME = SKILL_NAME
  const toFailure = fromCodex(
    "blctx asks Codex which skills it discovers",
    (home) =>
      `Check that codex starts with this home (CODEX_HOME=${home} codex) and fix what it reports in ${codexConfigFile(home)}`,
    SKILLS_STATUS
  )
  const listSkills = codex.listSkills(codexHome, paths.home).pipe(Effect.mapError(toFailure))

  const confirm = (record: SkillRecord) =>
    Effect.gen(function* () {
      const listing = yield* listSkills
      const real = yield* fs.realPath(record.path).pipe(Effect.orElseSucceed(() => record.path))
      const isOurs = (s: CodexSkill) => s.path === record.path || s.path === real
      const named = listing.skills.filter((s) => s.name === NAME)
      const ours = named.find(isOurs)
      if (ours === undefined) {
        const error = listing.errors.find((e) => e.path === record.path || e.path === real)
        return yield* fail(
          `Codex does not list the skill at ${record.path}${error === undefined ? "" : `: ${error.message}`}`,
          `Check ${record.path} (Codex lists its skills with /skills), then run: blctx install codex --step codex_skills`
        )
      }
      const others = named.filter((s) => !isOurs(s))
      if (others.length > 0) {
        return yield* fail(
          `Codex discovers ${NAME} twice: at ${record.path} and at ${others.map((s) => s.path).join(", ")}`,
          `Remove the other copy (${others.map((s) => NodePath.dirname(s.path)).join(", ")}) if it is an old one, then run: ${SKILLS_STATUS}`
        )
      }
      if (!ours.enabled) {
        return yield* fail(
          `the ${NAME} skill at ${record.path} is disabled in ${configFile} [[skills.config]] (enabled = false); blctx leaves it disabled`,
          `To use it, remove that [[skills.config]] entry for ${record.path} from ${configFile} (or set enabled = true).`
        )
      }
      return `Codex lists ${NAME} at ${record.path}, enabled (blctx ${record.version})`
    })

  /** Doctor: every copy Codex lists under the name, what it could not load, the file on disk. */
  const diagnose = (onDisk: Effect.Effect<string, StepFailure>) =>
    Effect.gen(function* () {
      const listing = yield* listSkills
      const named = listing.skills.filter((s) => s.name === NAME)
      const listed =
        named.length === 0
          ? `no skill named ${NAME}`
          : named.map((s) => `${s.path} (${s.scope}, ${s.enabled ? "enabled" : "disabled"})`).join(", ")
      const errors = listing.errors.filter((e) => e.path.includes(NAME))
      const unloadable =
        errors.length === 0 ? "" : `; Codex could not load ${errors.map((e) => `${e.path}: ${e.message}`).join(", ")}`
      return `Codex (CODEX_HOME ${codexHome}) lists ${listed}${unloadable}; ${yield* onDisk}`
    })

  const discovery: SkillDiscovery = { confirm, diagnose }
  return discovery
})

/**
 * Codex's side of the hooks: no hook defined inline in config.toml (Codex would load them beside
 * hooks.json), and Codex's own view of blctx's entries (`hooks/list`): each listed under its
 * event and enabled. Trust is a person's act in Codex (`/hooks`): blctx reports it, never
 * writes or requires it.
 */
const hooksAgent = Effect.gen(function* () {
  const codex = yield* CodexAppServer
  const paths = yield* Paths
  const fs = yield* SafeFs
  const codexHome = paths.codexHome
  const hooksFile = codexHooksFile(codexHome)
  const configFile = codexConfigFile(codexHome)

  /** Hook definitions inline in config.toml: Codex would load them beside hooks.json. */
  const inlineDefinitions = (next: string) =>
    Effect.gen(function* () {
      if (Option.isNone(yield* fs.lstat(configFile).pipe(Effect.orElseSucceed(() => Option.none())))) return []
      const text = yield* fs
        .readText(configFile)
        .pipe(Effect.mapError((e) => fail(`could not read ${configFile}: ${e.message}`, `Check it, then run: ${next}`)))
      const parsed = yield* Effect.try({
        try: () => toml.parse(text) as unknown,
        catch: (e) =>
          fail(
            `${configFile} is not valid TOML (${e instanceof Error ? e.message : String(e)}); nothing was changed`,
            `Fix it (Codex cannot read it either), then run: ${next}`
          )
      })
      return inlineHookEvents(parsed)
    })

  const beforeWrite = (next: string) =>
    Effect.gen(function* () {
      const inline = yield* inlineDefinitions(next)
      if (inline.length > 0) {
        return yield* fail(
          `${configFile} defines hooks inline (${inline.map((e) => `[hooks.${e}]`).join(", ")}); Codex would load them beside ${hooksFile}, so blctx added nothing: consolidate them into hooks.json first`,
          `Move the definitions under [hooks] in ${configFile} into ${hooksFile} (keep [hooks.state.*] where it is: that is Codex's trust), then run: ${next}`
        )
      }
    })

  const confirm = (entries: ReadonlyArray<HookEntry>, next: string) =>
    Effect.gen(function* () {
      const listing = yield* codex
        .listHooks(codexHome, paths.home)
        .pipe(
          Effect.mapError(
            fromCodex(
              "blctx asks Codex which hooks it loads and whether they are trusted",
              (home) => `Fix what codex reports in ${home}`,
              next
            )
          )
        )
      const judged = judgeHooksListing(listing, entries, hooksFile)
      if (judged.missing.length > 0) {
        const said = listingProblems(listing, hooksFile)
        return yield* fail(
          `Codex does not load blctx's ${eventsOf(judged.missing)} hook${judged.missing.length === 1 ? "" : "s"} from ${hooksFile}${said.length > 0 ? ` (Codex reports: ${said.join("; ")})` : ""}`,
          `Check what Codex reports for its hooks (in Codex: /hooks), then run: ${next}`
        )
      }
      if (judged.disabled.length > 0) {
        return yield* fail(
          `blctx's ${disabledEvents(judged)} hook${judged.disabled.length === 1 ? " is" : "s are"} disabled in Codex, so ${judged.disabled.length === 1 ? "it never runs" : "they never run"}`,
          `Enable ${judged.disabled.length === 1 ? "it" : "them"} in Codex (/hooks), or remove \`enabled = false\` from ${judged.disabled.map((d) => `[hooks.state."${d.hook.key}"]`).join(", ")} in ${configFile}`
        )
      }
      return {
        said: describeTrust(judged),
        pending: pendingEvents(judged),
        summary: `${judged.trusted.length} hooks trusted`
      }
    })

  const agent: HooksAgent = {
    beforeWrite,
    enabled: () => Effect.void,
    approval: { asks: true, confirm, approve: "Open Codex, run /hooks and trust the blctx hooks" }
  }
  return agent
})

/** Codex: `codex mcp` registrations in config.toml, skills under $CODEX_HOME/skills, hooks in hooks.json. */
export const codexIntegration: AgentIntegration<
  CodexCli | SafeFs,
  CodexAppServer | Paths | SafeFs,
  CodexAppServer | Paths | SafeFs
> = {
  target: "codex",
  name: "Codex",
  span: "Codex",
  transcripts: codexFormat,
  homeOf: (paths) => paths.codexHome,
  steps: { mcp: "codex_mcp", skills: "codex_skills", hooks: "codex_hooks" },
  mcp: {
    name: CODEX_MCP_NAME,
    records: recordList<McpRecord>("codex_mcp", { home: "codex_home" }),
    scope: "",
    addReplaces: true,
    cli: mcpCli,
    say: {
      cli: "codex",
      reporter: "Codex",
      registeredIn: (configFile, note) => `in ${configFile}${note === undefined ? "" : ` (${note})`}`,
      holder: (configFile) => configFile,
      readbackIn: (configFile) => ` in ${configFile}`,
      getArgs: (name) => `mcp get ${name} --json`
    }
  },
  skills: {
    records: recordList<SkillRecord>("codex_skills", { home: "codex_home" }),
    homeVariable: "CODEX_HOME",
    uninstall: "blctx uninstall codex --step codex_skills",
    missingHome: (home, reinstall) => ({
      detail: `the Codex home ${home} does not exist`,
      remediation: `Start Codex once (or create the folder: mkdir -p ${home}), then run: ${reinstall}`
    }),
    // A copy under ~/.agents/skills, or under Codex's default home when it is not the target,
    // would make Codex discover the skill twice.
    otherRoots: (paths, home) => {
      const defaultHome = NodePath.join(paths.home, ".codex")
      const roots = [NodePath.join(paths.home, ".agents", "skills")]
      if (NodePath.resolve(home) !== defaultHome) roots.push(NodePath.join(defaultHome, "skills"))
      return roots
    },
    discovery: skillDiscovery
  },
  hooks: {
    records: recordList<HooksRecord>("codex_hooks", { home: "codex_home", file: "hooks_file" }),
    events: EVENTS_IN_SECONDS,
    choice: "hooks",
    fileOf: codexHooksFile,
    fileName: "hooks.json",
    unparsable: "Codex cannot load any hook from it as it is",
    optional: "optional hooks",
    missingHome: (home, reinstall) => ({
      detail: `the Codex home ${home} does not exist, so there is no Codex to add hooks to`,
      remediation: `Run Codex once (or: blctx install codex, which registers the MCP server first), then run: ${reinstall}`
    }),
    unchecked: "0 hooks trusted",
    agent: hooksAgent
  }
}
