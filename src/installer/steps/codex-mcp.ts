import { type Context, DateTime, Effect, Option } from "effect"
import {
  CODEX_INSTALL_COMMAND,
  CodexCli,
  type CodexError,
  codexConfigFile,
  describeEntry,
  type McpServerEntry,
  sameStdioServer
} from "../../codex/codex-cli.js"
import type { InstallationId } from "../../domain/installation-id.js"
import { SafeFs } from "../../fs/safe-fs.js"
import { type CodexMcpRegistration, Manifest } from "../../ownership/manifest.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths, type ResolvedPaths } from "../../paths/paths.js"
import { ProgramPaths } from "../../paths/program-paths.js"
import { daemonArgv } from "../../service/daemon-args.js"
import { fail, type Step, type StepFailure, type StepRun } from "../step.js"
import { backupsOf, describeRewrite, preservingCodexConfig } from "./codex-config-backup.js"
import { stepManifest } from "./step-manifest.js"

/** The name blctx's MCP server has in Codex (Codex shows its tools as `mcp__base_layer_context__*`). */
export const CODEX_MCP_NAME = "base-layer-context"

const REINSTALL = "blctx install codex --step codex_mcp"

/** What Codex holds under the name, judged against blctx's record and what this installation writes. */
type Judgement =
  | { readonly _tag: "Absent" }
  /** Recorded, and runs exactly what this installation writes. */
  | { readonly _tag: "Current"; readonly entry: McpServerEntry }
  /** Recorded and unchanged since, but written for other paths (node, blctx or XDG roots moved). */
  | { readonly _tag: "Outdated"; readonly entry: McpServerEntry }
  /** Recorded, but it now runs something else: a person changed it. */
  | { readonly _tag: "Modified"; readonly entry: McpServerEntry }
  /** Not recorded: someone else's server with the same name. */
  | { readonly _tag: "Foreign"; readonly entry: McpServerEntry }

/**
 * An entry is blctx's when the manifest records a registration under this name in this Codex
 * home and the entry still runs what was recorded, or exactly what this installation writes
 * (an update interrupted between `codex mcp add` and recording it). Anything else is not touched.
 */
const judge = (
  found: Option.Option<McpServerEntry>,
  record: CodexMcpRegistration | undefined,
  desired: Option.Option<CodexMcpRegistration>
): Judgement => {
  if (Option.isNone(found)) return { _tag: "Absent" }
  const entry = found.value
  if (record === undefined) return { _tag: "Foreign", entry }
  if (Option.exists(desired, (d) => sameStdioServer(entry, d))) return { _tag: "Current", entry }
  if (sameStdioServer(entry, record)) return { _tag: "Outdated", entry }
  return { _tag: "Modified", entry }
}

const sameRegistration = (a: CodexMcpRegistration, b: CodexMcpRegistration) =>
  a.codex_home === b.codex_home &&
  a.name === b.name &&
  a.command === b.command &&
  a.args.length === b.args.length &&
  a.args.every((arg, i) => arg === b.args[i])

/** A path as a shell word, quoted only when it needs to be, so a remediation can be pasted as is. */
const shellWord = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`)

const commandLine = (r: Pick<CodexMcpRegistration, "command" | "args">) => [r.command, ...r.args].join(" ")

/**
 * Registers blctx's stdio MCP server with Codex as `base-layer-context`, through the Codex CLI
 * (`codex mcp add`), so Codex starts it in every conversation: the absolute node interpreter, the
 * bundled MCP entry, the installation id and the four XDG roots (the daemon's own arguments), so
 * the agent's environment can never point it at another installation. Codex calls the server's
 * four read tools without asking, because they are annotated `readOnlyHint: true`.
 *
 * Ownership is the manifest's `codex_mcp` record (Codex home, name, command, args): recorded
 * before `codex mcp add`, so an interrupted install is retried as blctx's own. An entry of that
 * name that blctx did not record, or that was changed since, is refused with a remediation and
 * never overwritten; every other entry of config.toml is Codex's to keep (blctx only asks Codex
 * to add, get and remove its one name).
 */
/**
 * The command that runs this installation's MCP server: the absolute node and bundled entry, then
 * the installation id and its XDG roots (the daemon's own arguments). codex_mcp registers it;
 * history_retrieval runs it.
 */
export const mcpServerCommand = (
  programs: Context.Tag.Service<ProgramPaths>,
  paths: ResolvedPaths,
  installationId: InstallationId
): { readonly command: string; readonly args: ReadonlyArray<string> } => ({
  command: programs.node,
  args: [
    programs.mcp,
    ...daemonArgv({
      "installation-id": installationId,
      "data-home": paths.dataHome,
      "config-home": paths.configHome,
      "cache-home": paths.cacheHome,
      "state-home": paths.stateHome
    })
  ]
})

export const codexMcpStep = Effect.gen(function* () {
  const codex = yield* CodexCli
  const manifests = yield* ManifestStore
  const paths = yield* Paths
  const programs = yield* ProgramPaths
  const fs = yield* SafeFs

  const codexHome = paths.codexHome
  const configFile = codexConfigFile(codexHome)
  const codexCommand = (home: string, args: string) => `CODEX_HOME=${shellWord(home)} codex ${args}`

  const fromCodex =
    (next: string) =>
    (e: CodexError): StepFailure =>
      e._tag === "CodexNotFound"
        ? fail(
            `${e.message}; blctx registers its MCP server through the Codex CLI`,
            `Install Codex: ${CODEX_INSTALL_COMMAND} (or put codex on PATH), then run: ${next}`,
            e._tag
          )
        : fail(
            e.message,
            `Fix what codex reports in ${codexConfigFile(e.codexHome)} (check with: ${codexCommand(e.codexHome, "mcp list")}), then run: ${next}`,
            e._tag
          )

  const { read: readManifest, readActive } = stepManifest(manifests, "blctx install codex")

  /** What this installation registers: same program paths and arguments every time, so reinstalling changes nothing. */
  const desiredFor = (m: Manifest): CodexMcpRegistration => ({
    codex_home: codexHome,
    name: CODEX_MCP_NAME,
    ...mcpServerCommand(programs, paths, m.installation_id)
  })

  /** The programs a registration runs must exist, or Codex would fail to start the server. */
  const checkPrograms = (desired: CodexMcpRegistration) =>
    Effect.gen(function* () {
      for (const program of [desired.command, desired.args[0] ?? ""]) {
        if (!(yield* fs.exists(program))) {
          return yield* fail(
            `${program} does not exist, so Codex could not start blctx's MCP server`,
            `Reinstall or rebuild blctx (npm run build in its folder), then run: ${REINSTALL}`
          )
        }
      }
    })

  const recordOf = (m: Manifest, home: string) =>
    (m.codex_mcp ?? []).find((r) => r.codex_home === home && r.name === CODEX_MCP_NAME)

  /** Writes the registrations blctx owns (one per Codex home and name) into the manifest. */
  const writeRecords = (m: Manifest, records: ReadonlyArray<CodexMcpRegistration>) =>
    Effect.gen(function* () {
      const { codex_mcp: _previous, ...rest } = m
      const updated_at = DateTime.formatIso(yield* DateTime.now)
      yield* manifests
        .write(new Manifest({ ...rest, ...(records.length > 0 ? { codex_mcp: records } : {}), updated_at }))
        .pipe(
          Effect.mapError((e) =>
            fail(`could not record the registration in ${manifests.path}: ${e.message}`, "Check the state directory.")
          )
        )
    })

  const withRecord = (m: Manifest, record: CodexMcpRegistration) => [
    ...(m.codex_mcp ?? []).filter((r) => !(r.codex_home === record.codex_home && r.name === record.name)),
    record
  ]

  const collision = (entry: McpServerEntry) =>
    fail(
      `${configFile} already has an MCP server named ${CODEX_MCP_NAME} that blctx did not register (${describeEntry(entry)}); it was left untouched`,
      `If it is not needed, remove it (${codexCommand(codexHome, `mcp remove ${CODEX_MCP_NAME}`)}), then run: ${REINSTALL}`
    )

  const modified = (entry: McpServerEntry, record: CodexMcpRegistration) =>
    fail(
      `${CODEX_MCP_NAME} in ${configFile} was changed after blctx registered it (it now runs ${describeEntry(entry)}; blctx wrote ${commandLine(record)}); it was left untouched`,
      `To let blctx register it again: ${codexCommand(codexHome, `mcp remove ${CODEX_MCP_NAME}`)}, then run: ${REINSTALL}. To keep your version, leave it: blctx will not change it.`
    )

  /**
   * `codex mcp add` (config.toml backed up first, its mode put back after), then reads it back:
   * Codex must report exactly what was asked. Says what the rewrite left.
   */
  const register = (desired: CodexMcpRegistration, run: StepRun) =>
    Effect.gen(function* () {
      const [, rewrite] = yield* preservingCodexConfig(
        fs,
        configFile,
        run.progress
      )(codex.addMcpServer(codexHome, desired).pipe(Effect.mapError(fromCodex(REINSTALL))))
      const saved = yield* codex.getMcpServer(codexHome, CODEX_MCP_NAME).pipe(Effect.mapError(fromCodex(REINSTALL)))
      if (!Option.exists(saved, (e) => sameStdioServer(e, desired))) {
        return yield* fail(
          `codex mcp add reported success, but Codex now reports ${Option.match(saved, { onNone: () => "no entry", onSome: describeEntry })} for ${CODEX_MCP_NAME} in ${configFile}`,
          `Check ${configFile} (${codexCommand(codexHome, `mcp get ${CODEX_MCP_NAME} --json`)}), then run: ${REINSTALL}`
        )
      }
      return describeRewrite(rewrite)
    })

  const where = `${CODEX_MCP_NAME} in ${configFile}`
  const what = (m: Manifest, desired: CodexMcpRegistration) =>
    `${desired.args[0] ?? ""}, installation ${m.installation_id}`

  const install = Effect.fn("CodexMcp.install")(function* (run: StepRun) {
    const m = yield* readActive
    const desired = desiredFor(m)
    yield* checkPrograms(desired)
    const found = yield* codex.getMcpServer(codexHome, CODEX_MCP_NAME).pipe(Effect.mapError(fromCodex(REINSTALL)))
    const record = recordOf(m, codexHome)
    const judged = judge(found, record, Option.some(desired))
    switch (judged._tag) {
      case "Foreign":
        return yield* collision(judged.entry)
      case "Modified":
        return yield* modified(judged.entry, record ?? desired)
      case "Absent":
        // Recorded first: if anything stops us after `codex mcp add`, the entry is still ours.
        yield* writeRecords(m, withRecord(m, desired))
        return { detail: `registered ${where} (${what(m, desired)})${yield* register(desired, run)}` }
      case "Outdated": {
        // The recorded entry is replaced, then recorded: until then it is ours by either description.
        const rewrote = yield* register(desired, run)
        yield* writeRecords(m, withRecord(m, desired))
        return { detail: `updated ${where} (${what(m, desired)}); it ran ${commandLine(record ?? desired)}${rewrote}` }
      }
      case "Current":
        if (record === undefined || !sameRegistration(record, desired)) yield* writeRecords(m, withRecord(m, desired))
        return { detail: `${where} already registered (${what(m, desired)}), left as is` }
    }
  })

  const verify = Effect.fn("CodexMcp.verify")(function* () {
    const m = yield* readActive
    const desired = desiredFor(m)
    const found = yield* codex
      .getMcpServer(codexHome, CODEX_MCP_NAME)
      .pipe(Effect.mapError(fromCodex("blctx doctor --step codex_mcp")))
    const record = recordOf(m, codexHome)
    const judged = judge(found, record, Option.some(desired))
    switch (judged._tag) {
      case "Absent":
        return yield* fail(
          record === undefined
            ? `${CODEX_MCP_NAME} is not registered in ${configFile}`
            : `${CODEX_MCP_NAME} is no longer registered in ${configFile} (it was removed after install)`,
          `Run: ${REINSTALL}`
        )
      case "Foreign":
        return yield* collision(judged.entry)
      case "Modified":
        return yield* modified(judged.entry, record ?? desired)
      case "Outdated":
        return yield* fail(
          `${CODEX_MCP_NAME} in ${configFile} runs ${commandLine(record ?? desired)}, not what this installation writes (${commandLine(desired)})`,
          `Run: ${REINSTALL}`
        )
      case "Current":
        if (!judged.entry.enabled) {
          return yield* fail(
            `${CODEX_MCP_NAME} is disabled in ${configFile}, so Codex does not start it`,
            `Remove \`enabled = false\` from [mcp_servers.${CODEX_MCP_NAME}] in ${configFile}.`
          )
        }
        yield* checkPrograms(desired)
        return { detail: `${where} runs ${what(m, desired)}` }
    }
  })

  /** Doctor: which codex answers, where its config is and what it reports for the name, whatever verify found. */
  const diagnose = Effect.fn("CodexMcp.diagnose")(function* () {
    const found = yield* codex.locate.pipe(Effect.mapError(fromCodex(REINSTALL)))
    const version = Option.getOrElse(found.version, () => "of unknown version")
    const entry = yield* codex
      .getMcpServer(codexHome, CODEX_MCP_NAME)
      .pipe(Effect.mapError(fromCodex("blctx doctor --step codex_mcp")))
    const config = (yield* fs.exists(configFile)) ? configFile : `${configFile} (not created yet)`
    const reported = Option.match(entry, {
      onNone: () => `no server named ${CODEX_MCP_NAME}`,
      onSome: (e) => `${CODEX_MCP_NAME} = ${describeEntry(e)}`
    })
    const manifest = yield* readManifest.pipe(Effect.orElseSucceed(() => Option.none<Manifest>()))
    const homes = Option.match(manifest, {
      onNone: () => [],
      onSome: (m) => (m.codex_mcp ?? []).map((r) => r.codex_home)
    })
    const recorded = homes.length === 0 ? "blctx records no registration" : `blctx records one in ${homes.join(", ")}`
    return { detail: `codex ${version} at ${found.path}; config ${config}; Codex reports ${reported}; ${recorded}` }
  })

  const uninstall = Effect.fn("CodexMcp.uninstall")(function* (run: StepRun) {
    const manifest = yield* readManifest
    if (Option.isNone(manifest)) return { detail: "nothing to remove: no manifest, so blctx registered nothing" }
    const m = manifest.value
    const records = m.codex_mcp ?? []
    if (records.length === 0) return { detail: "nothing to remove: blctx has no MCP server registered with Codex" }
    const desired = desiredFor(m)
    const kept: Array<CodexMcpRegistration> = []
    const removed: Array<string> = []
    const gone: Array<string> = []
    const problems: Array<StepFailure> = []
    for (const record of records) {
      const config = codexConfigFile(record.codex_home)
      if (!(yield* fs.exists(record.codex_home))) {
        gone.push(config)
        continue
      }
      const next = `blctx uninstall codex, or delete [mcp_servers.${record.name}] from ${config} yourself`
      const found = yield* Effect.either(codex.getMcpServer(record.codex_home, record.name))
      if (found._tag === "Left") {
        kept.push(record)
        problems.push(fromCodex(next)(found.left))
        continue
      }
      if (Option.isNone(found.right)) {
        gone.push(config)
        continue
      }
      const entry = found.right.value
      const ours =
        sameStdioServer(entry, record) || (desired.codex_home === record.codex_home && sameStdioServer(entry, desired))
      if (!ours) {
        kept.push(record)
        problems.push(
          fail(
            `${record.name} in ${config} was changed after blctx registered it (it now runs ${describeEntry(entry)}); it was left untouched`,
            `If you no longer need it: ${codexCommand(record.codex_home, `mcp remove ${record.name}`)}`
          )
        )
        continue
      }
      const removal = yield* Effect.either(
        preservingCodexConfig(
          fs,
          config,
          run.progress
        )(codex.removeMcpServer(record.codex_home, record.name).pipe(Effect.mapError(fromCodex(next))))
      )
      if (removal._tag === "Left") {
        kept.push(record)
        problems.push(removal.left)
        continue
      }
      removed.push(config)
    }
    const backups = (yield* Effect.forEach([...removed, ...gone], (config) => backupsOf(fs, config))).flat()
    // A backup holds the person's own config.toml as it was: theirs to keep or delete.
    const keptBackups =
      backups.length === 0
        ? ""
        : `; kept the config.toml backups blctx made before Codex rewrote it (yours to delete): ${backups.join(", ")}`
    if (kept.length !== records.length) yield* writeRecords(m, kept)
    if (problems.length > 0) {
      return yield* fail(
        problems.map((p) => p.detail).join("; "),
        problems.map((p) => p.remediation).join("; "),
        problems[0]?.errorTag
      )
    }
    if (removed.length === 0) {
      return { detail: `nothing to remove: ${CODEX_MCP_NAME} was already gone from ${gone.join(", ")}${keptBackups}` }
    }
    const alreadyGone = gone.length > 0 ? `; already gone from ${gone.join(", ")}` : ""
    return { detail: `removed ${CODEX_MCP_NAME} from ${removed.join(", ")}${alreadyGone}${keptBackups}` }
  })

  const step: Step = {
    id: "codex_mcp",
    title: "Codex MCP registration",
    requires: ["data_directory"],
    install: (run) => install(run),
    verify: () => verify(),
    diagnose: () => diagnose(),
    uninstall: (run) => uninstall(run)
  }
  return step
})
