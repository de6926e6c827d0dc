import type { CommandDescriptor } from "@effect/cli"
import { quoteValue } from "../domain/decode-issues.js"
import { argumentChoices } from "./help.js"

/**
 * The one line a usage error says after `blctx: `, naming what was wrong. blctx's own options
 * word their errors themselves (`checked-options.ts`); what is left to @effect/cli (a missing or
 * extra argument, an argument's choice, an unknown command) is reworded here from its message and
 * the command line, because the library's words name neither the command nor the argument
 * (`Invalid subcommand for blctx`, `Expected one of the following cases: codex, claude`).
 */

type Descriptor = CommandDescriptor.Command<unknown>

/** The command line as the parser saw it (global flags removed), with the commands blctx has. */
export interface UsageContext {
  readonly args: ReadonlyArray<string>
  readonly names: ReadonlyArray<string>
  readonly descriptors: ReadonlyArray<Descriptor>
}

export const unknownCommand = (name: string) => `unknown command ${quoteValue(name)}; blctx --help lists the commands`

/** The first word that is not an option's value: what a positional argument was given as. */
const positionalNot = (args: ReadonlyArray<string>, choices: ReadonlyArray<string>) =>
  args.find((arg, i) => !arg.startsWith("-") && !choices.includes(arg) && !(args[i - 1] ?? "").startsWith("-"))

const choiceMessage = (choices: ReadonlyArray<string>, context: UsageContext): string => {
  const [command, ...rest] = context.args
  const descriptor = context.descriptors[context.names.indexOf(command ?? "")]
  const argument = descriptor === undefined ? undefined : argumentChoices(descriptor)[0]
  const got = positionalNot(rest, choices)
  const name = argument === undefined ? "the argument" : `${command} ${argument.name}`
  return `${name} must be one of ${choices.join(", ")}${got === undefined ? "" : ` (got ${quoteValue(got)})`}`
}

const RULES: ReadonlyArray<readonly [RegExp, (m: RegExpExecArray, context: UsageContext) => string]> = [
  [/^Expected one of the following cases: (.*)$/, (m, c) => choiceMessage((m[1] ?? "").split(", "), c)],
  [
    /^Received unknown argument: '(.*)'$/s,
    (m, c) =>
      `${c.args[0] ?? "blctx"} does not take ${quoteValue(m[1] ?? "")}; blctx ${c.args[0] ?? ""} --help lists what it takes`
  ],
  [
    /^Missing argument (<[^>]+>)(?: with choices (.*))?$/,
    (m, c) => `${c.args[0] ?? "blctx"} needs ${m[1]}${m[2] === undefined ? "" : ` (${m[2].split(" | ").join(", ")})`}`
  ],
  [/^Expected a value following option: '(.*)'$/, (m) => `${m[1]} needs a value`],
  [
    /^Invalid subcommand for /,
    (_, c) => {
      const [command, sub] = c.args
      return command !== undefined && c.names.includes(command) && sub !== undefined
        ? `unknown ${command} command ${quoteValue(sub)}; blctx ${command} --help lists them`
        : unknownCommand(command ?? "")
    }
  ]
]

/** The usage error's line: the library's message reworded when a rule knows it, else as it is. */
export const usageMessage = (text: string, context: UsageContext): string => {
  for (const [pattern, reword] of RULES) {
    const m = pattern.exec(text)
    if (m !== null) return reword(m, context)
  }
  return text
}
