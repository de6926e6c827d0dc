import { Context, type Effect, Schema } from "effect"
import type { CodexError } from "./codex-cli.js"

/**
 * What blctx reads from `codex app-server` (newline-delimited `{id, method, params}` over stdio:
 * `initialize`, the `initialized` notification, then one request). Only the fields blctx judges
 * are decoded; the rest of Codex's answer is ignored, so a newer Codex adding fields still reads.
 */
export const CodexSkill = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  path: Schema.String,
  scope: Schema.String,
  enabled: Schema.Boolean
})
export type CodexSkill = typeof CodexSkill.Type

export const CodexHookTrust = Schema.String
/** One hook as `hooks/list` reports it. `trustStatus` is "trusted", "untrusted", or what a later Codex adds. */
export const CodexHook = Schema.Struct({
  key: Schema.String,
  eventName: Schema.String,
  command: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  timeoutSec: Schema.Number,
  enabled: Schema.Boolean,
  currentHash: Schema.String,
  trustStatus: CodexHookTrust,
  sourcePath: Schema.String
})
export type CodexHook = typeof CodexHook.Type

/** An error Codex reports beside a list (a skill or hook file it could not load). */
export const CodexListError = Schema.Struct({ path: Schema.String, message: Schema.String })

export interface CodexSkillsListing {
  readonly skills: ReadonlyArray<CodexSkill>
  readonly errors: ReadonlyArray<typeof CodexListError.Type>
}

export interface CodexHooksListing {
  readonly hooks: ReadonlyArray<CodexHook>
  readonly warnings: ReadonlyArray<string>
  readonly errors: ReadonlyArray<typeof CodexListError.Type>
}

/**
 * The real Codex's own view of a Codex home: which skills it discovers and which hooks it loads,
 * with their trust. Every call names the Codex home (CODEX_HOME for the app-server process) and
 * the working directory Codex should inspect. Failures are the CLI's errors: no `codex`
 * (CodexNotFound), or an app-server that did not answer as documented (CodexCommandFailed).
 */
export class CodexAppServer extends Context.Tag("blctx/CodexAppServer")<
  CodexAppServer,
  {
    /** `skills/list {cwds: [cwd], forceReload: true}`. */
    readonly listSkills: (codexHome: string, cwd: string) => Effect.Effect<CodexSkillsListing, CodexError>
    /** `hooks/list {cwds: [cwd]}`. */
    readonly listHooks: (codexHome: string, cwd: string) => Effect.Effect<CodexHooksListing, CodexError>
  }
>() {}
