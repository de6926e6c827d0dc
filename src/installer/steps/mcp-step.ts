import { DateTime, Effect, Option } from "effect"
import { SafeFs } from "../../fs/safe-fs.js"
import { Manifest } from "../../ownership/manifest.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths } from "../../paths/paths.js"
import { ProgramPaths } from "../../paths/program-paths.js"
import type { AgentIntegration, FoundServer, McpCli, McpRecord } from "../agents/agent-integration.js"
import { fail, type StepFailure, type StepRun } from "../step.js"
import { mcpServerCommand } from "./mcp-server-command.js"
import { stepWithServices } from "./step-context.js"
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

/** What every part of the step works with: the agent, its CLI and home, and the commands its messages name. */
interface McpScope {
  readonly agent: AgentIntegration
  readonly cli: McpCli
  readonly home: string
  readonly configFile: string
  /** The command that retries the install (`blctx install codex --step codex_mcp`). */
  readonly reinstall: string
  readonly doctor: string
  /** Where the registration is, as the details say it. */
  readonly where: string
  readonly manifest: ReturnType<typeof stepManifest>
}

const scopeOf = <R>(agent: AgentIntegration<R>) =>
  Effect.gen(function* () {
    const cli = yield* agent.mcp.cli
    const home = agent.homeOf(yield* Paths)
    const configFile = cli.configFileOf(home)
    const scope: McpScope = {
      agent,
      cli,
      home,
      configFile,
      reinstall: `blctx install ${agent.target} --step ${agent.steps.mcp}`,
      doctor: `blctx doctor --step ${agent.steps.mcp}`,
      where: `${agent.mcp.name}${agent.mcp.scope} in ${configFile}`,
      manifest: stepManifest(yield* ManifestStore, `blctx install ${agent.target}`)
    }
    return scope
  })

/** What this installation registers: same program paths and arguments every time, so reinstalling changes nothing. */
const desiredFor = (s: McpScope, m: Manifest) =>
  Effect.gen(function* () {
    const command = mcpServerCommand(yield* ProgramPaths, yield* Paths, m.installation_id)
    const desired: McpRecord = { home: s.home, name: s.agent.mcp.name, ...command }
    return desired
  })

/** The programs a registration runs must exist, or the agent would fail to start the server. */
const checkPrograms = (s: McpScope, desired: McpRecord) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    for (const program of [desired.command, desired.args[0] ?? ""]) {
      if (!(yield* fs.exists(program))) {
        return yield* fail(
          `${program} does not exist, so ${s.agent.name} could not start blctx's MCP server`,
          `Reinstall or rebuild blctx (npm run build in its folder), then run: ${s.reinstall}`
        )
      }
    }
  })

const recordOf = (s: McpScope, m: Manifest) =>
  s.agent.mcp.records.read(m).find((r) => r.home === s.home && r.name === s.agent.mcp.name)

/** Writes the registrations blctx owns (one per agent home and name) into the manifest. */
const writeRecords = (s: McpScope, m: Manifest, list: ReadonlyArray<McpRecord>) =>
  Effect.gen(function* () {
    const manifests = yield* ManifestStore
    const updated_at = DateTime.formatIso(yield* DateTime.now)
    yield* manifests
      .write(new Manifest({ ...s.agent.mcp.records.with({ ...m }, list), updated_at }))
      .pipe(
        Effect.mapError((e) =>
          fail(`could not record the registration in ${manifests.path}: ${e.message}`, "Check the state directory.")
        )
      )
  })

const withRecord = (s: McpScope, m: Manifest, record: McpRecord) => [
  ...s.agent.mcp.records.read(m).filter((r) => !(r.home === record.home && r.name === record.name)),
  record
]

const collision = (s: McpScope, entry: FoundServer) =>
  fail(
    `${s.agent.mcp.say.holder(s.configFile)} already has an MCP server named ${s.agent.mcp.name} that blctx did not register (${entry.description}); it was left untouched`,
    `If it is not needed, remove it (${entry.removeCommand}), then run: ${s.reinstall}`
  )

const modified = (s: McpScope, entry: FoundServer, record: McpRecord) =>
  fail(
    `${s.agent.mcp.name} in ${s.configFile} was changed after blctx registered it (it now runs ${entry.description}; blctx wrote ${commandLine(record)}); it was left untouched`,
    `To let blctx register it again: ${entry.removeCommand}, then run: ${s.reinstall}. To keep your version, leave it: blctx will not change it.`
  )

/** Adds the server, then reads it back: the agent must report exactly what was asked. Says what a rewrite left. */
const register = (s: McpScope, desired: McpRecord, run: StepRun) =>
  Effect.gen(function* () {
    const { name, say } = s.agent.mcp
    const rewrote = yield* s.cli.add(s.home, desired, run, s.reinstall)
    const saved = yield* s.cli.get(s.home, name, s.reinstall)
    if (!Option.exists(saved, (e) => e.runs(desired))) {
      return yield* fail(
        `${say.cli} mcp add reported success, but ${say.reporter} now reports ${Option.match(saved, { onNone: () => "no entry", onSome: (e) => e.description })} for ${name}${say.readbackIn(s.configFile)}`,
        `Check ${s.configFile} (${s.cli.command(s.home, say.getArgs(name))}), then run: ${s.reinstall}`
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
const replace = (s: McpScope, m: Manifest, desired: McpRecord, run: StepRun) =>
  s.agent.mcp.addReplaces
    ? Effect.tap(register(s, desired, run), () => writeRecords(s, m, withRecord(s, m, desired)))
    : Effect.gen(function* () {
        yield* s.cli.remove(s.home, s.agent.mcp.name, run, s.reinstall)
        yield* writeRecords(s, m, withRecord(s, m, desired))
        return yield* register(s, desired, run)
      })

const what = (m: Manifest, desired: McpRecord) => `${desired.args[0] ?? ""}, installation ${m.installation_id}`

const install = (s: McpScope, run: StepRun) =>
  Effect.gen(function* () {
    const m = yield* s.manifest.readActive
    const desired = yield* desiredFor(s, m)
    yield* checkPrograms(s, desired)
    const found = yield* s.cli.get(s.home, s.agent.mcp.name, s.reinstall)
    const record = recordOf(s, m)
    const judged = judge(found, record, desired)
    switch (judged._tag) {
      case "Foreign":
        return yield* collision(s, judged.entry)
      case "Modified":
        return yield* modified(s, judged.entry, record ?? desired)
      case "Absent":
        // Recorded first: if anything stops us after adding it, the entry is still ours.
        yield* writeRecords(s, m, withRecord(s, m, desired))
        return { detail: `registered ${s.where} (${what(m, desired)})${yield* register(s, desired, run)}` }
      case "Outdated": {
        const rewrote = yield* replace(s, m, desired, run)
        return {
          detail: `updated ${s.where} (${what(m, desired)}); it ran ${commandLine(record ?? desired)}${rewrote}`
        }
      }
      case "Current":
        if (record === undefined || !sameRegistration(record, desired)) {
          yield* writeRecords(s, m, withRecord(s, m, desired))
        }
        return { detail: `${s.where} already registered (${what(m, desired)}), left as is` }
    }
  }).pipe(Effect.withSpan(`${s.agent.span}Mcp.install`))

const verify = (s: McpScope) =>
  Effect.gen(function* () {
    const { name, say } = s.agent.mcp
    const m = yield* s.manifest.readActive
    const desired = yield* desiredFor(s, m)
    const found = yield* s.cli.get(s.home, name, s.doctor)
    const record = recordOf(s, m)
    const judged = judge(found, record, desired)
    switch (judged._tag) {
      case "Absent":
        return yield* fail(
          record === undefined
            ? `${name} is not registered ${say.registeredIn(s.configFile)}`
            : `${name} is no longer registered ${say.registeredIn(s.configFile, "it was removed after install")}`,
          `Run: ${s.reinstall}`
        )
      case "Foreign":
        return yield* collision(s, judged.entry)
      case "Modified":
        return yield* modified(s, judged.entry, record ?? desired)
      case "Outdated":
        return yield* fail(
          `${name} in ${s.configFile} runs ${commandLine(record ?? desired)}, not what this installation writes (${commandLine(desired)})`,
          `Run: ${s.reinstall}`
        )
      case "Current": {
        const programs = Effect.provide(checkPrograms(s, desired), yield* Effect.context<SafeFs>())
        const said = yield* judged.entry.confirm(programs, s.reinstall)
        return { detail: `${s.where} runs ${what(m, desired)}${said}` }
      }
    }
  }).pipe(Effect.withSpan(`${s.agent.span}Mcp.verify`))

/** Doctor: which CLI answers, where its config is and what it reports for the name, whatever verify found. */
const diagnose = (s: McpScope) =>
  Effect.gen(function* () {
    const { name, records, say } = s.agent.mcp
    const found = yield* s.cli.locate(s.reinstall)
    const entry = yield* s.cli.get(s.home, name, s.doctor)
    const config = (yield* (yield* SafeFs).exists(s.configFile)) ? s.configFile : `${s.configFile} (not created yet)`
    const reported = Option.match(entry, {
      onNone: () => `no server named ${name}`,
      onSome: (e) => `${name} = ${e.report}`
    })
    const manifest = yield* s.manifest.read.pipe(Effect.orElseSucceed(() => Option.none<Manifest>()))
    const homes = Option.match(manifest, {
      onNone: () => [],
      onSome: (m) => records.read(m).map((r) => r.home)
    })
    const recorded = homes.length === 0 ? "blctx records no registration" : `blctx records one in ${homes.join(", ")}`
    return { detail: `${found.said}; config ${config}; ${say.reporter} reports ${reported}; ${recorded}` }
  }).pipe(Effect.withSpan(`${s.agent.span}Mcp.diagnose`))

/** Removes one recorded registration; a failure says why it stays recorded. */
const removeOne = (s: McpScope, record: McpRecord, desired: McpRecord, run: StepRun) =>
  Effect.gen(function* () {
    const config = s.cli.configFileOf(record.home)
    if (!(yield* s.cli.present(record.home))) return "gone" as const
    const next = `blctx uninstall ${s.agent.target}, or ${s.cli.removeYourself(record.home, record.name)} yourself`
    const found = yield* s.cli.get(record.home, record.name, next)
    if (Option.isNone(found)) return "gone" as const
    const entry = found.value
    const ours = entry.runs(record) || (desired.home === record.home && entry.runs(desired))
    if (!ours) {
      return yield* fail(
        `${record.name} in ${config} was changed after blctx registered it (it now runs ${entry.description}); it was left untouched`,
        `If you no longer need it: ${entry.removeCommand}`
      )
    }
    yield* s.cli.remove(record.home, record.name, run, next)
    return "removed" as const
  })

/** Removes every recorded registration, sorting their config files by what happened; the failed stay recorded. */
const removeAll = (s: McpScope, recorded: ReadonlyArray<McpRecord>, desired: McpRecord, run: StepRun) =>
  Effect.gen(function* () {
    const kept: Array<McpRecord> = []
    const removed: Array<string> = []
    const gone: Array<string> = []
    const problems: Array<StepFailure> = []
    for (const record of recorded) {
      const outcome = yield* Effect.either(removeOne(s, record, desired, run))
      if (outcome._tag === "Left") {
        kept.push(record)
        problems.push(outcome.left)
      } else {
        ;(outcome.right === "removed" ? removed : gone).push(s.cli.configFileOf(record.home))
      }
    }
    return { kept, removed, gone, problems } as const
  })

const uninstall = (s: McpScope, run: StepRun) =>
  Effect.gen(function* () {
    const { name, records } = s.agent.mcp
    const manifest = yield* s.manifest.read
    if (Option.isNone(manifest)) return { detail: "nothing to remove: no manifest, so blctx registered nothing" }
    const m = manifest.value
    const recorded = records.read(m)
    if (recorded.length === 0) {
      return { detail: `nothing to remove: blctx has no MCP server registered with ${s.agent.name}` }
    }
    const { kept, removed, gone, problems } = yield* removeAll(s, recorded, yield* desiredFor(s, m), run)
    const after = yield* s.cli.afterRemoval([...removed, ...gone])
    if (kept.length !== recorded.length) yield* writeRecords(s, m, kept)
    if (problems.length > 0) return yield* allOf(problems)
    if (removed.length === 0) {
      return { detail: `nothing to remove: ${name} was already gone from ${gone.join(", ")}${after}` }
    }
    const alreadyGone = gone.length > 0 ? `; already gone from ${gone.join(", ")}` : ""
    return { detail: `removed ${name} from ${removed.join(", ")}${alreadyGone}${after}` }
  }).pipe(Effect.withSpan(`${s.agent.span}Mcp.uninstall`))

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
  Effect.flatMap(scopeOf(agent), (s) =>
    stepWithServices(
      { id: agent.steps.mcp, title: `${agent.name} MCP registration`, requires: ["data_directory"] },
      {
        install: (run) => install(s, run),
        verify: () => verify(s),
        diagnose: () => diagnose(s),
        uninstall: (run) => uninstall(s, run)
      }
    )
  )
