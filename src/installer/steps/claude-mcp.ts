import { DateTime, Effect, Option } from "effect"
import {
  CLAUDE_BIN_VARIABLE,
  CLAUDE_INSTALL_COMMAND,
  ClaudeCli,
  type ClaudeError,
  type ClaudeMcpServer,
  claudeConfigFile,
  describeClaudeEntry,
  sameClaudeServer
} from "../../claude/claude-cli.js"
import { SafeFs } from "../../fs/safe-fs.js"
import { type ClaudeMcpRegistration, Manifest } from "../../ownership/manifest.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths } from "../../paths/paths.js"
import { ProgramPaths } from "../../paths/program-paths.js"
import { fail, type Step, type StepFailure } from "../step.js"
import { mcpServerCommand } from "./codex-mcp.js"
import { stepManifest } from "./step-manifest.js"

/** The name blctx's MCP server has in Claude Code (its tools are `mcp__base-layer-context__*`). */
export const CLAUDE_MCP_NAME = "base-layer-context"

const REINSTALL = "blctx install claude --step claude_mcp"

/** What Claude holds under the name, judged against blctx's record and what this installation writes. */
type Judgement =
  | { readonly _tag: "Absent" }
  | { readonly _tag: "Current"; readonly entry: ClaudeMcpServer }
  | { readonly _tag: "Outdated"; readonly entry: ClaudeMcpServer }
  | { readonly _tag: "Modified"; readonly entry: ClaudeMcpServer }
  | { readonly _tag: "Foreign"; readonly entry: ClaudeMcpServer }

const judge = (
  found: Option.Option<ClaudeMcpServer>,
  record: ClaudeMcpRegistration | undefined,
  desired: ClaudeMcpRegistration
): Judgement => {
  if (Option.isNone(found)) return { _tag: "Absent" }
  const entry = found.value
  if (record === undefined) return { _tag: "Foreign", entry }
  if (sameClaudeServer(entry, desired)) return { _tag: "Current", entry }
  if (sameClaudeServer(entry, record)) return { _tag: "Outdated", entry }
  return { _tag: "Modified", entry }
}

const sameRegistration = (a: ClaudeMcpRegistration, b: ClaudeMcpRegistration) =>
  a.claude_home === b.claude_home &&
  a.name === b.name &&
  a.command === b.command &&
  a.args.length === b.args.length &&
  a.args.every((arg, i) => arg === b.args[i])

const shellWord = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`)

const commandLine = (r: Pick<ClaudeMcpRegistration, "command" | "args">) => [r.command, ...r.args].join(" ")

/**
 * Registers blctx's stdio MCP server with Claude Code as `base-layer-context` at user scope,
 * through Claude's CLI (`claude mcp add --scope user`), never by editing `~/.claude.json`: the
 * same command codex_mcp registers (absolute node, the bundled MCP entry, the installation id and
 * the XDG roots). Verification asks `claude mcp get`, which starts the server: it must run exactly
 * that command and connect.
 *
 * Ownership is the manifest's `claude_mcp` record (Claude configuration directory, name, command,
 * args), written before `claude mcp add`, as for codex_mcp: an entry of that name blctx did not
 * record, or one changed since, is refused with a remediation and never overwritten; every other
 * entry is Claude's to keep.
 */
export const claudeMcpStep = Effect.gen(function* () {
  const claude = yield* ClaudeCli
  const manifests = yield* ManifestStore
  const paths = yield* Paths
  const programs = yield* ProgramPaths
  const fs = yield* SafeFs

  const claudeHome = paths.claudeHome
  const configFileOf = (home: string) => claudeConfigFile(home, paths.home)
  const configFile = configFileOf(claudeHome)
  const claudeCommand = (home: string, args: string) =>
    configFileOf(home) === `${paths.home}/.claude.json`
      ? `claude ${args}`
      : `CLAUDE_CONFIG_DIR=${shellWord(home)} claude ${args}`

  const fromClaude =
    (next: string) =>
    (e: ClaudeError): StepFailure =>
      e._tag === "ClaudeNotFound"
        ? fail(
            `${e.message}; blctx registers its MCP server through Claude Code's CLI`,
            `Install Claude Code: ${CLAUDE_INSTALL_COMMAND} (or put claude on PATH, or set ${CLAUDE_BIN_VARIABLE} to its absolute path), then run: ${next}`,
            e._tag
          )
        : fail(
            e.message,
            `Fix what claude reports about ${configFileOf(e.claudeHome)} (check with: ${claudeCommand(e.claudeHome, "mcp list")}), then run: ${next}`,
            e._tag
          )

  const { read: readManifest, readActive } = stepManifest(manifests, "blctx install claude")

  const desiredFor = (m: Manifest): ClaudeMcpRegistration => ({
    claude_home: claudeHome,
    name: CLAUDE_MCP_NAME,
    ...mcpServerCommand(programs, paths, m.installation_id)
  })

  const checkPrograms = (desired: ClaudeMcpRegistration) =>
    Effect.gen(function* () {
      for (const program of [desired.command, desired.args[0] ?? ""]) {
        if (!(yield* fs.exists(program))) {
          return yield* fail(
            `${program} does not exist, so Claude Code could not start blctx's MCP server`,
            `Reinstall or rebuild blctx (npm run build in its folder), then run: ${REINSTALL}`
          )
        }
      }
    })

  const recordOf = (m: Manifest, home: string) =>
    (m.claude_mcp ?? []).find((r) => r.claude_home === home && r.name === CLAUDE_MCP_NAME)

  const writeRecords = (m: Manifest, records: ReadonlyArray<ClaudeMcpRegistration>) =>
    Effect.gen(function* () {
      const { claude_mcp: _previous, ...rest } = m
      const updated_at = DateTime.formatIso(yield* DateTime.now)
      yield* manifests
        .write(new Manifest({ ...rest, ...(records.length > 0 ? { claude_mcp: records } : {}), updated_at }))
        .pipe(
          Effect.mapError((e) =>
            fail(`could not record the registration in ${manifests.path}: ${e.message}`, "Check the state directory.")
          )
        )
    })

  const withRecord = (m: Manifest, record: ClaudeMcpRegistration) => [
    ...(m.claude_mcp ?? []).filter((r) => !(r.claude_home === record.claude_home && r.name === record.name)),
    record
  ]

  const removeHint = (home: string, entry?: ClaudeMcpServer) =>
    claudeCommand(home, `mcp remove ${entry === undefined || entry.userScope ? "--scope user " : ""}${CLAUDE_MCP_NAME}`)

  const collision = (entry: ClaudeMcpServer) =>
    fail(
      `Claude Code already has an MCP server named ${CLAUDE_MCP_NAME} that blctx did not register (${describeClaudeEntry(entry)}); it was left untouched`,
      `If it is not needed, remove it (${removeHint(claudeHome, entry)}), then run: ${REINSTALL}`
    )

  const modified = (entry: ClaudeMcpServer, record: ClaudeMcpRegistration) =>
    fail(
      `${CLAUDE_MCP_NAME} in ${configFile} was changed after blctx registered it (it now runs ${describeClaudeEntry(entry)}; blctx wrote ${commandLine(record)}); it was left untouched`,
      `To let blctx register it again: ${removeHint(claudeHome, entry)}, then run: ${REINSTALL}. To keep your version, leave it: blctx will not change it.`
    )

  const notConnected = (entry: ClaudeMcpServer) =>
    fail(
      `Claude Code could not start ${CLAUDE_MCP_NAME} (${entry.status || "no status"}${Option.match(entry.issue, { onNone: () => "", onSome: (i) => `: ${i}` })})`,
      `Check the daemon (blctx status --step service_health) and what Claude reports (${claudeCommand(claudeHome, `mcp get ${CLAUDE_MCP_NAME}`)}), then run: ${REINSTALL}`
    )

  /** `claude mcp add`, then reads it back: Claude must report exactly what was asked. */
  const register = (desired: ClaudeMcpRegistration) =>
    Effect.gen(function* () {
      yield* claude.addMcpServer(claudeHome, desired).pipe(Effect.mapError(fromClaude(REINSTALL)))
      const saved = yield* claude.getMcpServer(claudeHome, CLAUDE_MCP_NAME).pipe(Effect.mapError(fromClaude(REINSTALL)))
      if (!Option.exists(saved, (e) => sameClaudeServer(e, desired))) {
        return yield* fail(
          `claude mcp add reported success, but Claude now reports ${Option.match(saved, { onNone: () => "no entry", onSome: describeClaudeEntry })} for ${CLAUDE_MCP_NAME}`,
          `Check ${configFile} (${claudeCommand(claudeHome, `mcp get ${CLAUDE_MCP_NAME}`)}), then run: ${REINSTALL}`
        )
      }
    })

  const where = `${CLAUDE_MCP_NAME} at user scope in ${configFile}`
  const what = (m: Manifest, desired: ClaudeMcpRegistration) =>
    `${desired.args[0] ?? ""}, installation ${m.installation_id}`

  const install = Effect.fn("ClaudeMcp.install")(function* () {
    const m = yield* readActive
    const desired = desiredFor(m)
    yield* checkPrograms(desired)
    const found = yield* claude.getMcpServer(claudeHome, CLAUDE_MCP_NAME).pipe(Effect.mapError(fromClaude(REINSTALL)))
    const record = recordOf(m, claudeHome)
    const judged = judge(found, record, desired)
    switch (judged._tag) {
      case "Foreign":
        return yield* collision(judged.entry)
      case "Modified":
        return yield* modified(judged.entry, record ?? desired)
      case "Absent":
        // Recorded first: if anything stops us after `claude mcp add`, the entry is still ours.
        yield* writeRecords(m, withRecord(m, desired))
        yield* register(desired)
        return { detail: `registered ${where} (${what(m, desired)})` }
      case "Outdated":
        // Claude refuses to add a name it has: the unchanged old entry is removed, then the new
        // one recorded and added. Interrupted in between, a rerun finds nothing and registers.
        yield* claude.removeMcpServer(claudeHome, CLAUDE_MCP_NAME).pipe(Effect.mapError(fromClaude(REINSTALL)))
        yield* writeRecords(m, withRecord(m, desired))
        yield* register(desired)
        return { detail: `updated ${where} (${what(m, desired)}); it ran ${commandLine(record ?? desired)}` }
      case "Current":
        if (record === undefined || !sameRegistration(record, desired)) yield* writeRecords(m, withRecord(m, desired))
        return { detail: `${where} already registered (${what(m, desired)}), left as is` }
    }
  })

  const verify = Effect.fn("ClaudeMcp.verify")(function* () {
    const m = yield* readActive
    const desired = desiredFor(m)
    const found = yield* claude
      .getMcpServer(claudeHome, CLAUDE_MCP_NAME)
      .pipe(Effect.mapError(fromClaude("blctx doctor --step claude_mcp")))
    const record = recordOf(m, claudeHome)
    const judged = judge(found, record, desired)
    switch (judged._tag) {
      case "Absent":
        return yield* fail(
          record === undefined
            ? `${CLAUDE_MCP_NAME} is not registered with Claude Code (${configFile})`
            : `${CLAUDE_MCP_NAME} is no longer registered with Claude Code (${configFile}; it was removed after install)`,
          `Run: ${REINSTALL}`
        )
      case "Foreign":
        return yield* collision(judged.entry)
      case "Modified":
        return yield* modified(judged.entry, record ?? desired)
      case "Outdated":
        return yield* fail(
          `${CLAUDE_MCP_NAME} in ${configFile} runs ${commandLine(record ?? desired)}, not what this installation writes (${commandLine(desired)})`,
          `Run: ${REINSTALL}`
        )
      case "Current":
        yield* checkPrograms(desired)
        if (!judged.entry.connected) return yield* notConnected(judged.entry)
        return { detail: `${where} runs ${what(m, desired)}; Claude reports it connected` }
    }
  })

  /** Doctor: which claude answers, its configuration file and what it reports for the name. */
  const diagnose = Effect.fn("ClaudeMcp.diagnose")(function* () {
    const found = yield* claude.locate.pipe(Effect.mapError(fromClaude(REINSTALL)))
    const version = Option.getOrElse(found.version, () => "of unknown version")
    const entry = yield* claude
      .getMcpServer(claudeHome, CLAUDE_MCP_NAME)
      .pipe(Effect.mapError(fromClaude("blctx doctor --step claude_mcp")))
    const config = (yield* fs.exists(configFile)) ? configFile : `${configFile} (not created yet)`
    const reported = Option.match(entry, {
      onNone: () => `no server named ${CLAUDE_MCP_NAME}`,
      onSome: (e) => `${CLAUDE_MCP_NAME} = ${describeClaudeEntry(e)}, ${e.status || "no status"}`
    })
    const manifest = yield* readManifest.pipe(Effect.orElseSucceed(() => Option.none<Manifest>()))
    const homes = Option.match(manifest, {
      onNone: () => [],
      onSome: (m) => (m.claude_mcp ?? []).map((r) => r.claude_home)
    })
    const recorded = homes.length === 0 ? "blctx records no registration" : `blctx records one in ${homes.join(", ")}`
    const from = found.source === "variable" ? ` (${CLAUDE_BIN_VARIABLE})` : ""
    return {
      detail: `claude ${version} at ${found.path}${from}; config ${config}; Claude reports ${reported}; ${recorded}`
    }
  })

  const uninstall = Effect.fn("ClaudeMcp.uninstall")(function* () {
    const manifest = yield* readManifest
    if (Option.isNone(manifest)) return { detail: "nothing to remove: no manifest, so blctx registered nothing" }
    const m = manifest.value
    const records = m.claude_mcp ?? []
    if (records.length === 0)
      return { detail: "nothing to remove: blctx has no MCP server registered with Claude Code" }
    const desired = desiredFor(m)
    const kept: Array<ClaudeMcpRegistration> = []
    const removed: Array<string> = []
    const gone: Array<string> = []
    const problems: Array<StepFailure> = []
    for (const record of records) {
      const config = configFileOf(record.claude_home)
      if (!(yield* fs.exists(config))) {
        gone.push(config)
        continue
      }
      const next = `blctx uninstall claude, or run ${removeHint(record.claude_home)} yourself`
      const found = yield* Effect.either(claude.getMcpServer(record.claude_home, record.name))
      if (found._tag === "Left") {
        kept.push(record)
        problems.push(fromClaude(next)(found.left))
        continue
      }
      if (Option.isNone(found.right)) {
        gone.push(config)
        continue
      }
      const entry = found.right.value
      const ours =
        sameClaudeServer(entry, record) ||
        (desired.claude_home === record.claude_home && sameClaudeServer(entry, desired))
      if (!ours) {
        kept.push(record)
        problems.push(
          fail(
            `${record.name} in ${config} was changed after blctx registered it (it now runs ${describeClaudeEntry(entry)}); it was left untouched`,
            `If you no longer need it: ${removeHint(record.claude_home, entry)}`
          )
        )
        continue
      }
      const removal = yield* Effect.either(claude.removeMcpServer(record.claude_home, record.name))
      if (removal._tag === "Left") {
        kept.push(record)
        problems.push(fromClaude(next)(removal.left))
        continue
      }
      removed.push(config)
    }
    if (kept.length !== records.length) yield* writeRecords(m, kept)
    if (problems.length > 0) {
      return yield* fail(
        problems.map((p) => p.detail).join("; "),
        problems.map((p) => p.remediation).join("; "),
        problems[0]?.errorTag
      )
    }
    if (removed.length === 0) {
      return { detail: `nothing to remove: ${CLAUDE_MCP_NAME} was already gone from ${gone.join(", ")}` }
    }
    const alreadyGone = gone.length > 0 ? `; already gone from ${gone.join(", ")}` : ""
    return { detail: `removed ${CLAUDE_MCP_NAME} from ${removed.join(", ")}${alreadyGone}` }
  })

  const step: Step = {
    id: "claude_mcp",
    title: "Claude Code MCP registration",
    requires: ["data_directory"],
    install: () => install(),
    verify: () => verify(),
    diagnose: () => diagnose(),
    uninstall: () => uninstall()
  }
  return step
})
