/**
 * What the CLI writes to stderr is short and redacted. Error messages may quote what was given
 * (@effect/cli says `'<value>' is not a integer`, whole): a quoted value over 40 characters keeps
 * a 40-character redacted prefix and its length, every line is redacted and cut at 1,000
 * characters. Output on stdout is the command's own, untouched.
 */
import { Console, type Effect } from "effect"
import { MAX_QUOTED_CHARS, quoteValue } from "../domain/decode-issues.js"
import { redactSecrets } from "../redaction/redact.js"

/** The longest stderr line the CLI writes. */
export const MAX_ERROR_LINE_CHARS = 1_000

/** A single-quoted run longer than a quote may be (the way @effect/cli quotes a value). */
const LONG_QUOTED = new RegExp(`'([^'\\n]{${MAX_QUOTED_CHARS + 1},})'`, "g")

const boundLine = (line: string): string => {
  const quoted = line.replace(LONG_QUOTED, (_, value: string) => quoteValue(value))
  if (quoted.length <= MAX_ERROR_LINE_CHARS) return redactSecrets(quoted).text
  const prefix = redactSecrets(quoted.slice(0, 4 * MAX_ERROR_LINE_CHARS)).text.slice(0, MAX_ERROR_LINE_CHARS)
  return `${prefix}… (${quoted.length.toLocaleString("en-US")} characters)`
}

/** Error text as the CLI may show it: long quotes shortened, each line redacted and bounded. */
export const boundErrorText = (text: string): string => text.split("\n").map(boundLine).join("\n")

/** Runs `effect` with every `Console.error` text bounded by `boundErrorText`. */
export const withBoundedErrors = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Console.consoleWith((console) =>
    Console.withConsole(effect, {
      ...console,
      error: (...args: ReadonlyArray<unknown>) =>
        console.error(...args.map((arg) => (typeof arg === "string" ? boundErrorText(arg) : arg)))
    })
  )
