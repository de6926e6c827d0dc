import { Option } from "effect"

/** What a person reads when an agent's command was looked for on PATH and not found. */
export const notOnPath = (command: string, searched: ReadonlyArray<string>): string =>
  searched.length === 0
    ? `the ${command} command was not found: PATH is empty`
    : `the ${command} command was not found on PATH (${searched.join(":")})`

/** What an agent CLI's not-found error holds: the PATH directories searched, and its variable when set. */
export interface CommandNotFoundFields {
  /** The PATH directories that were searched (empty when the variable decided). */
  readonly searched: ReadonlyArray<string>
  readonly variable: Option.Option<string>
}

/**
 * Why an agent's command is unusable: the variable that names it (`BLCTX_CLAUDE_BIN`) points at no
 * executable file, or, unset, PATH has none.
 */
export const commandNotFound = (
  command: string,
  variableName: string,
  variable: Option.Option<string>,
  searched: ReadonlyArray<string>
): string =>
  Option.isSome(variable)
    ? `${variableName}=${variable.value} is not an executable file (it must be an absolute path to ${command})`
    : notOnPath(command, searched)
