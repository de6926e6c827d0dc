import type { Effect, Option } from "effect"
import { HOOK_EVENTS, type HookEventName } from "../../capture/hook-event.js"
import { HOOK_TIMEOUTS, type HookEntry, type HooksDocument } from "../../codex/hooks-file.js"
import type { AgentTarget, StepId } from "../../domain/step-id.js"
import type { Manifest } from "../../ownership/manifest.js"
import type { ResolvedPaths } from "../../paths/paths.js"
import type { TranscriptFormat } from "../../transcripts/formats/transcript-format.js"
import type { StepFailure, StepRun } from "../step.js"
import type { RecordList } from "./manifest-records.js"

/** The bundled skill's name: its folder in a skills root and the `name:` of its front matter. */
export const SKILL_NAME = "base-layer-context"

/** An MCP server registration blctx made with an agent, under neutral names (see RecordList). */
export interface McpRecord {
  readonly home: string
  readonly name: string
  readonly command: string
  readonly args: ReadonlyArray<string>
}

/** A skill file blctx wrote into an agent's skills root; blctx's only while it hashes to `sha256`. */
export interface SkillRecord {
  readonly home: string
  readonly root: string
  readonly path: string
  readonly version: string
  readonly sha256: string
}

/** The hook entries blctx merged into an agent's hooks file, with the generation their commands carry. */
export interface HooksRecord {
  readonly home: string
  readonly file: string
  readonly generation: string
  readonly entries: ReadonlyArray<HookEntry>
}

/** A server as the agent reports it under blctx's name, judged by the agent's own rules. */
export interface FoundServer {
  /** Whether it runs exactly this stdio command and nothing more (no environment, no cwd). */
  readonly runs: (server: Pick<McpRecord, "command" | "args">) => boolean
  /** One line saying what it runs. */
  readonly description: string
  /** What doctor says of it. */
  readonly report: string
  /** The command that removes this entry, as a person types it. */
  readonly removeCommand: string
  /**
   * Whether the agent uses it, once it runs what blctx wrote: fails when it would not (disabled,
   * not connected); otherwise what to add to the detail. `programs` checks blctx's own files;
   * `next` is the command that retries.
   */
  readonly confirm: (programs: Effect.Effect<void, StepFailure>, next: string) => Effect.Effect<string, StepFailure>
}

/** The agent's CLI as the MCP step uses it; every failure already says what to do, then `next`. */
export interface McpCli {
  /** The file the agent keeps the registration in. */
  readonly configFileOf: (home: string) => string
  /** A CLI command as a person types it for this home (`CODEX_HOME=/x codex mcp list`). */
  readonly command: (home: string, args: string) => string
  /** How a person removes the entry of `name` from this home, said after "or ... yourself". */
  readonly removeYourself: (home: string, name: string) => string
  /** Whether the registration's home can still hold it (gone: nothing to remove). */
  readonly present: (home: string) => Effect.Effect<boolean>
  readonly locate: (next: string) => Effect.Effect<{ readonly said: string }, StepFailure>
  readonly get: (home: string, name: string, next: string) => Effect.Effect<Option.Option<FoundServer>, StepFailure>
  /** Adds the server; what to add to the detail (what a rewrite of the agent's file left). */
  readonly add: (home: string, server: McpRecord, run: StepRun, next: string) => Effect.Effect<string, StepFailure>
  readonly remove: (home: string, name: string, run: StepRun, next: string) => Effect.Effect<void, StepFailure>
  /** What to add to uninstall's detail once it is done with these config files. */
  readonly afterRemoval: (configFiles: ReadonlyArray<string>) => Effect.Effect<string>
}

export interface McpIntegration<R> {
  /** The name blctx's server has in the agent. */
  readonly name: string
  readonly records: RecordList<McpRecord>
  /** Where the registration lives, as the detail says it (` at user scope`, or nothing). */
  readonly scope: string
  /**
   * Whether adding a name the agent has replaces it (Codex) or is refused (Claude Code, so the
   * old entry is removed first).
   */
  readonly addReplaces: boolean
  /** The agent's CLI (`codex mcp`, `claude mcp`). */
  readonly cli: Effect.Effect<McpCli, never, R>
  /** Texts that differ between agents. */
  readonly say: {
    /** `codex`: the command's name in "codex mcp add reported success". */
    readonly cli: string
    /** `Codex`: who "now reports" the entry. */
    readonly reporter: string
    /** Where the entry is, after "is not registered" (`in FILE`, `with Claude Code (FILE)`). */
    readonly registeredIn: (configFile: string, note?: string) => string
    /** Who already has a server of that name (the config file, or the agent). */
    readonly holder: (configFile: string) => string
    /** Where the readback looked, after "for NAME". */
    readonly readbackIn: (configFile: string) => string
    /** The `mcp get` arguments a person runs to check. */
    readonly getArgs: (name: string) => string
  }
}

/** How the agent confirms the skill it discovers; without it, the file itself is checked. */
export interface SkillDiscovery {
  /** The detail of a verified skill, after asking the agent. */
  readonly confirm: (record: SkillRecord) => Effect.Effect<string, StepFailure>
  /** Doctor's detail, around what is on disk. */
  readonly diagnose: (onDisk: Effect.Effect<string, StepFailure>) => Effect.Effect<string, StepFailure>
}

export interface SkillsIntegration<R> {
  readonly records: RecordList<SkillRecord>
  /** The variable that names the agent's home, as messages say it. */
  readonly homeVariable: string
  readonly uninstall: string
  readonly missingHome: (home: string, reinstall: string) => { readonly detail: string; readonly remediation: string }
  /** Other skills roots where a copy would make the agent discover the skill twice. */
  readonly otherRoots: (paths: ResolvedPaths, home: string) => ReadonlyArray<string>
  readonly discovery: Effect.Effect<SkillDiscovery, never, R>
}

/** What the agent says of blctx's hook entries once they are in place. */
export interface HooksApproval {
  /** Appended to the detail: `2 trusted, 2 awaiting approval ...`. */
  readonly said: string
  /** Events the agent still waits for a person to approve. */
  readonly pending: ReadonlyArray<string>
  /** Doctor's count: `4 hooks trusted`. */
  readonly summary: string
}

export interface HooksAgent {
  /** Checks of the agent's own configuration before blctx writes its hooks file; `next` retries. */
  readonly beforeWrite: (next: string) => Effect.Effect<void, StepFailure>
  /** Checks that the agent runs the hooks of a file in place (not disabled); `decline` names the opt-out. */
  readonly enabled: (doc: HooksDocument, file: string, decline: string) => Effect.Effect<void, StepFailure>
  /**
   * The agent's own view of the entries, when it asks a person to approve hooks (Codex lists
   * them with their trust). An agent that runs user hooks without asking has a fixed answer, and
   * its doctor checks blctx's programs instead.
   */
  readonly approval:
    | {
        readonly asks: true
        readonly confirm: (entries: ReadonlyArray<HookEntry>, next: string) => Effect.Effect<HooksApproval, StepFailure>
        /** What to do about hooks awaiting approval. */
        readonly approve: string
      }
    | { readonly asks: false; readonly said: HooksApproval }
}

/** One of blctx's hook events as the agent's hooks file names it, with its timeout in the agent's unit. */
export interface AgentHookEvent {
  readonly name: string
  readonly timeout: number
}

/** Codex's and Claude Code's events: blctx's own names, timeouts in seconds (HOOK_TIMEOUTS). */
export const EVENTS_IN_SECONDS = Object.fromEntries(
  HOOK_EVENTS.map((event) => [event, { name: event, timeout: HOOK_TIMEOUTS[event] }])
) as Readonly<Record<HookEventName, AgentHookEvent>>

export interface HooksIntegration<R> {
  readonly records: RecordList<HooksRecord>
  /**
   * Under which event of the agent's file each of blctx's events goes, and its timeout there.
   * The handler's command keeps blctx's name; the agent's name is what its payload carries
   * (src/capture/hook-event.ts reads both).
   */
  readonly events: Readonly<Record<HookEventName, AgentHookEvent>>
  /** Where the person's choice about the hooks is kept. */
  readonly choice: keyof Manifest["choices"]
  readonly fileOf: (home: string) => string
  /** The file's name as people know it. */
  readonly fileName: string
  /** What the agent does with a file it cannot parse. */
  readonly unparsable: string
  /** `optional hooks`: what "declined" is said of. */
  readonly optional: string
  readonly missingHome: (home: string, reinstall: string) => { readonly detail: string; readonly remediation: string }
  /** Doctor's count when the hooks could not be checked. */
  readonly unchecked: string
  readonly agent: Effect.Effect<HooksAgent, never, R>
}

/**
 * Everything blctx knows of one coding agent, as data: its transcripts and what the installer
 * registers with it (MCP server, skill, hooks). A step per concern serves every agent from this
 * record; adding an agent is one record and its transcript format.
 */
export interface AgentIntegration<M = unknown, S = unknown, H = unknown> {
  readonly target: AgentTarget
  /** The agent as a person names it: `Codex`, `Claude Code`. */
  readonly name: string
  /** Prefix of the steps' span names: `Codex`. */
  readonly span: string
  readonly transcripts: TranscriptFormat
  /** The agent's home this run works on (CODEX_HOME, CLAUDE_CONFIG_DIR). */
  readonly homeOf: (paths: ResolvedPaths) => string
  readonly steps: {
    readonly mcp: StepId
    readonly skills: StepId
    readonly hooks: StepId
  }
  /** Each concern names the services it needs, so a step needs only its own. */
  readonly mcp: McpIntegration<M>
  readonly skills: SkillsIntegration<S>
  readonly hooks: HooksIntegration<H>
}
