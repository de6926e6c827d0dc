import { Effect, Option } from "effect"
import type { AgentCliPort } from "../../domain/agent-cli.js"
import { fail, type StepFailure } from "../step.js"
import {
  type FoundServer,
  type McpCli,
  SKILL_NAME,
  type SkillDiscovery,
  type SkillRecord
} from "./agent-integration.js"

/** What differs between the agent CLIs behind `McpCli`; the calls and their failures are the same. */
export interface AgentCliMcp<Entry, NotFound extends TaggedError, Failed extends TaggedError>
  extends AgentCliFailureTexts<NotFound, Failed> {
  readonly port: AgentCliPort<Entry, NotFound | Failed, NotFound | Failed>
  readonly removeHint: (home: string) => string
  readonly present: (home: string) => Effect.Effect<boolean>
  readonly foundServer: (home: string) => (entry: Entry) => FoundServer
}

/** `McpCli` over an agent CLI that registers, reads back and removes entries itself. */
export const mcpCliOverAgentCli = <Entry, NotFound extends TaggedError, Failed extends TaggedError>(
  agent: AgentCliMcp<Entry, NotFound, Failed>
): McpCli => {
  const failure = agentCliFailure(agent)
  return {
    configFileOf: agent.configFileOf,
    command: agent.command,
    removeYourself: (home) => `run ${agent.removeHint(home)}`,
    present: agent.present,
    locate: (next) =>
      agent.port.locate.pipe(
        Effect.mapError(failure(next)),
        Effect.map((found) => {
          const version = Option.getOrElse(found.version, () => "of unknown version")
          const from = found.source === "variable" ? ` (${agent.binVariable})` : ""
          return { said: `${agent.bin} ${version} at ${found.path}${from}` }
        })
      ),
    get: (home, name, next) =>
      agent.port
        .getMcpServer(home, name)
        .pipe(Effect.mapError(failure(next)), Effect.map(Option.map(agent.foundServer(home)))),
    add: (home, server, _run, next) =>
      agent.port.addMcpServer(home, server).pipe(Effect.mapError(failure(next)), Effect.as("")),
    remove: (home, name, _run, next) => agent.port.removeMcpServer(home, name).pipe(Effect.mapError(failure(next))),
    afterRemoval: () => Effect.succeed("")
  }
}

type TaggedError = { readonly _tag: string; readonly message: string }

/** The texts of an agent CLI's failures: it is missing, or a command of it failed in a home. */
export interface AgentCliFailureTexts<NotFound, Failed> {
  /** `Claude Code`, as "Install Claude Code: ..." says it. */
  readonly product: string
  readonly installCommand: string
  /** The executable's name (`claude`) and the variable that names it instead of PATH. */
  readonly bin: string
  readonly binVariable: string
  /** Why blctx needs the CLI, after the missing one's message. */
  readonly why: string
  readonly isNotFound: (e: NotFound | Failed) => e is NotFound
  readonly homeOf: (e: Failed) => string
  readonly configFileOf: (home: string) => string
  readonly command: (home: string, args: string) => string
}

/** A step failure for an agent CLI's error, with what to install or fix and what to run next. */
export const agentCliFailure =
  <NotFound extends TaggedError, Failed extends TaggedError>(texts: AgentCliFailureTexts<NotFound, Failed>) =>
  (next: string) =>
  (e: NotFound | Failed): StepFailure => {
    if (texts.isNotFound(e)) {
      return fail(
        `${e.message}; ${texts.why}`,
        `Install ${texts.product}: ${texts.installCommand} (or put ${texts.bin} on PATH, or set ${texts.binVariable} to its absolute path), then run: ${next}`,
        e._tag
      )
    }
    const home = texts.homeOf(e)
    return fail(
      e.message,
      `Fix what ${texts.bin} reports about ${texts.configFileOf(home)} (check with: ${texts.command(home, "mcp list")}), then run: ${next}`,
      e._tag
    )
  }

/**
 * The skill checked on disk, for agents whose only way to list skills starts a whole session:
 * the file blctx wrote is the proof, and doctor says which agent folder it looked in.
 */
export const skillCheckedOnDisk = (folder: string): SkillDiscovery => ({
  confirm: (record: SkillRecord) =>
    Effect.succeed(`${SKILL_NAME} is at ${record.path} as blctx wrote it (blctx ${record.version})`),
  diagnose: (onDisk) => Effect.map(onDisk, (said) => `${folder}: ${said}`)
})
