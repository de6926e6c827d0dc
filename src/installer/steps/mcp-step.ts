import { DateTime, Effect, Option } from "effect"
import { SafeFs } from "../../fs/safe-fs.js"
import { Manifest } from "../../ownership/manifest.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths } from "../../paths/paths.js"
import { ProgramPaths } from "../../paths/program-paths.js"
import type { AgentIntegration, FoundServer, McpRecord } from "../agents/agent-integration.js"
import { fail, type Step, type StepFailure, type StepRun } from "../step.js"
import { mcpServerCommand } from "./mcp-server-command.js"
import { stepManifest } from "./step-manifest.js"

/** What the agent holds under the name, judged against blctx's record and what this installation writes. */
type Judgement =
  | { readonly _tag: "Absent" }
  /** Recorded, and runs exactly what this installation writes. */
  | { readonly _tag: "Current"; readonly entry: FoundServer }
  /** Recorded and unchanged since, but written for other paths (node, blctx or XDG roots moved). */
  | { readonly _tag: "Outdated"; readonly entry: FoundServer }
  /** Recorded, but it now runs something else: a person changed it. */
  | { readonly _tag: "Modified"; readonly entry: FoundServer }
  /** Not recorded: someone else's server with the same name. */
  | { readonly _tag: "Foreign"; readonly entry: FoundServer }

/**
 * An entry is blctx's when the manifest records a registration under this name in this agent
 * home and the entry still runs what was recorded, or exactly what this installation writes (an
 * update interrupted between adding it and recording it). Anything else is not touched.
 */
const judge = (found: Option.Option<FoundServer>, record: McpRecord | undefined, desired: McpRecord): Judgement => {
  if (Option.isNone(found)) return { _tag: "Absent" }
  const entry = found.value
  if (record === undefined) return { _tag: "Foreign", entry }
  if (entry.runs(desired)) return { _tag: "Current", entry }
  if (entry.runs(record)) return { _tag: "Outdated", entry }
  return { _tag: "Modified", entry }
}

const sameRegistration = (a: McpRecord, b: McpRecord) =>
  a.home === b.home &&
  a.name === b.name &&
  a.command === b.command &&
  a.args.length === b.args.length &&
  a.args.every((arg, i) => arg === b.args[i])

const commandLine = (r: Pick<McpRecord, "command" | "args">) => [r.command, ...r.args].join(" ")

/** Joins several failures into one, so uninstall reports every home it could not clean. */
const allOf = (problems: ReadonlyArray<StepFailure>) =>
  fail(problems.map((p) => p.detail).join("; "), problems.map((p) => p.remediation).join("; "), problems[0]?.errorTag)

/**
 * Registers blctx's stdio MCP server with an agent (codex_mcp, claude_mcp) through the agent's
 * own CLI (`codex mcp add`, `claude mcp add --scope user`), never by editing its files: the
 * absolute node interpreter, the bundled MCP entry, the installation id and the four XDG roots
 * (the daemon's own arguments), so the agent's environment can never point it at another
 * installation. Verification asks the agent's CLI what it holds under the name.
 *
 * Ownership is the manifest's record (agent home, name, command, args), written before the
 * registration, so an interrupted install is retried as blctx's own. An entry of that name that
 * blctx did not record, or that was changed since, is refused with a remediation and never
 * overwritten; every other entry is the agent's to keep.
 */
export const mcpStep = <R>(agent: AgentIntegration<R>) =>
  Effect.gen(function* () {
    const cli = yield* agent.mcp.cli
    const manifests = yield* ManifestStore
    const paths = yield* Paths
    const programs = yield* ProgramPaths
    const fs = yield* SafeFs

    const { name: NAME, records, say } = agent.mcp
    const id = agent.steps.mcp
    const REINSTALL = `blctx install ${agent.target} --step ${id}`
    const DOCTOR = `blctx doctor --step ${id}`
    const home = agent.homeOf(paths)
    const configFile = cli.configFileOf(home)

    const { read: readManifest, readActive } = stepManifest(manifests, `blctx install ${agent.target}`)

    /** What this installation registers: same program paths and arguments every time, so reinstalling changes nothing. */
    const desiredFor = (m: Manifest): McpRecord => ({
      home,
      name: NAME,
      ...mcpServerCommand(programs, paths, m.installation_id)
    })

    /** The programs a registration runs must exist, or the agent would fail to start the server. */
    const checkPrograms = (desired: McpRecord) =>
      Effect.gen(function* () {
        for (const program of [desired.command, desired.args[0] ?? ""]) {
          if (!(yield* fs.exists(program))) {
            return yield* fail(
              `${program} does not exist, so ${agent.name} could not start blctx's MCP server`,
              `Reinstall or rebuild blctx (npm run build in its folder), then run: ${REINSTALL}`
            )
          }
        }
      })

    const recordOf = (m: Manifest) => records.read(m).find((r) => r.home === home && r.name === NAME)

    /** Writes the registrations blctx owns (one per agent home and name) into the manifest. */
    const writeRecords = (m: Manifest, list: ReadonlyArray<McpRecord>) =>
      Effect.gen(function* () {
        const updated_at = DateTime.formatIso(yield* DateTime.now)
        yield* manifests
          .write(new Manifest({ ...records.with({ ...m }, list), updated_at }))
          .pipe(
            Effect.mapError((e) =>
              fail(`could not record the registration in ${manifests.path}: ${e.message}`, "Check the state directory.")
            )
          )
      })

    const withRecord = (m: Manifest, record: McpRecord) => [
      ...records.read(m).filter((r) => !(r.home === record.home && r.name === record.name)),
      record
    ]

    const collision = (entry: FoundServer) =>
      fail(
        `${say.holder(configFile)} already has an MCP server named ${NAME} that blctx did not register (${entry.description}); it was left untouched`,
        `If it is not needed, remove it (${entry.removeCommand}), then run: ${REINSTALL}`
      )

    const modified = (entry: FoundServer, record: McpRecord) =>
      fail(
        `${NAME} in ${configFile} was changed after blctx registered it (it now runs ${entry.description}; blctx wrote ${commandLine(record)}); it was left untouched`,
        `To let blctx register it again: ${entry.removeCommand}, then run: ${REINSTALL}. To keep your version, leave it: blctx will not change it.`
      )

    /** Adds the server, then reads it back: the agent must report exactly what was asked. Says what a rewrite left. */
    const register = (desired: McpRecord, run: StepRun) =>
      Effect.gen(function* () {
        const rewrote = yield* cli.add(home, desired, run, REINSTALL)
        const saved = yield* cli.get(home, NAME, REINSTALL)
        if (!Option.exists(saved, (e) => e.runs(desired))) {
          return yield* fail(
            `${say.cli} mcp add reported success, but ${say.reporter} now reports ${Option.match(saved, { onNone: () => "no entry", onSome: (e) => e.description })} for ${NAME}${say.readbackIn(configFile)}`,
            `Check ${configFile} (${cli.command(home, say.getArgs(NAME))}), then run: ${REINSTALL}`
          )
        }
        return rewrote
      })

    /**
     * Replaces an unchanged older registration. Where adding replaces, the new entry is added,
     * then recorded: until then it is ours by either description. Where the agent refuses a name
     * it has, the old entry is removed, then the new one recorded and added: interrupted in
     * between, a rerun finds nothing and registers.
     */
    const replace = (m: Manifest, desired: McpRecord, run: StepRun) =>
      agent.mcp.addReplaces
        ? Effect.tap(register(desired, run), () => writeRecords(m, withRecord(m, desired)))
        : Effect.gen(function* () {
            yield* cli.remove(home, NAME, run, REINSTALL)
            yield* writeRecords(m, withRecord(m, desired))
            return yield* register(desired, run)
          })

    const where = `${NAME}${agent.mcp.scope} in ${configFile}`
    const what = (m: Manifest, desired: McpRecord) => `${desired.args[0] ?? ""}, installation ${m.installation_id}`

    const install = Effect.fn(`${agent.span}Mcp.install`)(function* (run: StepRun) {
      const m = yield* readActive
      const desired = desiredFor(m)
      yield* checkPrograms(desired)
      const found = yield* cli.get(home, NAME, REINSTALL)
      const record = recordOf(m)
      const judged = judge(found, record, desired)
      switch (judged._tag) {
        case "Foreign":
          return yield* collision(judged.entry)
        case "Modified":
          return yield* modified(judged.entry, record ?? desired)
        case "Absent":
          // Recorded first: if anything stops us after adding it, the entry is still ours.
          yield* writeRecords(m, withRecord(m, desired))
          return { detail: `registered ${where} (${what(m, desired)})${yield* register(desired, run)}` }
        case "Outdated": {
          const rewrote = yield* replace(m, desired, run)
          return {
            detail: `updated ${where} (${what(m, desired)}); it ran ${commandLine(record ?? desired)}${rewrote}`
          }
        }
        case "Current":
          if (record === undefined || !sameRegistration(record, desired)) yield* writeRecords(m, withRecord(m, desired))
          return { detail: `${where} already registered (${what(m, desired)}), left as is` }
      }
    })

    const verify = Effect.fn(`${agent.span}Mcp.verify`)(function* () {
      const m = yield* readActive
      const desired = desiredFor(m)
      const found = yield* cli.get(home, NAME, DOCTOR)
      const record = recordOf(m)
      const judged = judge(found, record, desired)
      switch (judged._tag) {
        case "Absent":
          return yield* fail(
            record === undefined
              ? `${NAME} is not registered ${say.registeredIn(configFile)}`
              : `${NAME} is no longer registered ${say.registeredIn(configFile, "it was removed after install")}`,
            `Run: ${REINSTALL}`
          )
        case "Foreign":
          return yield* collision(judged.entry)
        case "Modified":
          return yield* modified(judged.entry, record ?? desired)
        case "Outdated":
          return yield* fail(
            `${NAME} in ${configFile} runs ${commandLine(record ?? desired)}, not what this installation writes (${commandLine(desired)})`,
            `Run: ${REINSTALL}`
          )
        case "Current": {
          const said = yield* judged.entry.confirm(checkPrograms(desired), REINSTALL)
          return { detail: `${where} runs ${what(m, desired)}${said}` }
        }
      }
    })

    /** Doctor: which CLI answers, where its config is and what it reports for the name, whatever verify found. */
    const diagnose = Effect.fn(`${agent.span}Mcp.diagnose`)(function* () {
      const found = yield* cli.locate(REINSTALL)
      const entry = yield* cli.get(home, NAME, DOCTOR)
      const config = (yield* fs.exists(configFile)) ? configFile : `${configFile} (not created yet)`
      const reported = Option.match(entry, {
        onNone: () => `no server named ${NAME}`,
        onSome: (e) => `${NAME} = ${e.report}`
      })
      const manifest = yield* readManifest.pipe(Effect.orElseSucceed(() => Option.none<Manifest>()))
      const homes = Option.match(manifest, {
        onNone: () => [],
        onSome: (m) => records.read(m).map((r) => r.home)
      })
      const recorded = homes.length === 0 ? "blctx records no registration" : `blctx records one in ${homes.join(", ")}`
      return { detail: `${found.said}; config ${config}; ${say.reporter} reports ${reported}; ${recorded}` }
    })

    /** Removes one recorded registration; a failure says why it stays recorded. */
    const removeOne = (record: McpRecord, desired: McpRecord, run: StepRun) =>
      Effect.gen(function* () {
        const config = cli.configFileOf(record.home)
        if (!(yield* cli.present(record.home))) return "gone" as const
        const next = `blctx uninstall ${agent.target}, or ${cli.removeYourself(record.home, record.name)} yourself`
        const found = yield* cli.get(record.home, record.name, next)
        if (Option.isNone(found)) return "gone" as const
        const entry = found.value
        const ours = entry.runs(record) || (desired.home === record.home && entry.runs(desired))
        if (!ours) {
          return yield* fail(
            `${record.name} in ${config} was changed after blctx registered it (it now runs ${entry.description}); it was left untouched`,
            `If you no longer need it: ${entry.removeCommand}`
          )
        }
        yield* cli.remove(record.home, record.name, run, next)
        return "removed" as const
      })

    const uninstall = Effect.fn(`${agent.span}Mcp.uninstall`)(function* (run: StepRun) {
      const manifest = yield* readManifest
      if (Option.isNone(manifest)) return { detail: "nothing to remove: no manifest, so blctx registered nothing" }
      const m = manifest.value
      const recorded = records.read(m)
      if (recorded.length === 0) {
        return { detail: `nothing to remove: blctx has no MCP server registered with ${agent.name}` }
      }
      const desired = desiredFor(m)
      const kept: Array<McpRecord> = []
      const removed: Array<string> = []
      const gone: Array<string> = []
      const problems: Array<StepFailure> = []
      for (const record of recorded) {
        const outcome = yield* Effect.either(removeOne(record, desired, run))
        if (outcome._tag === "Left") {
          kept.push(record)
          problems.push(outcome.left)
        } else {
          ;(outcome.right === "removed" ? removed : gone).push(cli.configFileOf(record.home))
        }
      }
      const after = yield* cli.afterRemoval([...removed, ...gone])
      if (kept.length !== recorded.length) yield* writeRecords(m, kept)
      if (problems.length > 0) return yield* allOf(problems)
      if (removed.length === 0) {
        return { detail: `nothing to remove: ${NAME} was already gone from ${gone.join(", ")}${after}` }
      }
      const alreadyGone = gone.length > 0 ? `; already gone from ${gone.join(", ")}` : ""
      return { detail: `removed ${NAME} from ${removed.join(", ")}${alreadyGone}${after}` }
    })

    const step: Step = {
      id,
      title: `${agent.name} MCP registration`,
      requires: ["data_directory"],
      install: (run) => install(run),
      verify: () => verify(),
      diagnose: () => diagnose(),
      uninstall: (run) => uninstall(run)
    }
    return step
  })
