import { HelpDoc, Options, ValidationError } from "@effect/cli"
import { Effect, Either } from "effect"
import { quoteValue } from "../domain/decode-issues.js"
import { describeBound, type NumberBound, withinBound } from "../domain/read-bounds.js"
import { parseInstant, TimeRangeError } from "../retrieval/time-range.js"

/**
 * Options whose values blctx checks itself, so that a wrong value is a usage error naming the
 * option and what it accepts (`--limit must be between 1 and 100 (got 0)`), found before anything
 * is asked of the daemon. @effect/cli's own integer and float options say only `'abc' is not a
 * integer`, and a value out of a request's bounds would otherwise reach the request schema.
 */

const INTEGER = /^[+-]?\d+$/
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/

/** The number `text` gives `option`, or the one-line message saying what the option accepts. */
export const parseBounded = (option: string, text: string, bound: NumberBound): Either.Either<number, string> => {
  const range = describeBound(bound)
  const kind = `${bound.fractional === true ? "a number" : "an integer"}${range.startsWith("at least") ? " of" : ""}`
  const wellFormed = (bound.fractional === true ? DECIMAL : INTEGER).test(text.trim())
  const n = wellFormed ? Number(text.trim()) : Number.NaN
  if (!wellFormed || !Number.isFinite(n)) {
    return Either.left(`${option} must be ${kind} ${range} (got ${quoteValue(text)})`)
  }
  const given = text.trim().length <= 20 ? text.trim() : quoteValue(text.trim())
  if (!withinBound(n, bound)) return Either.left(`${option} must be ${range} (got ${given})`)
  return Either.right(n)
}

const invalid = (message: string) => ValidationError.invalidValue(HelpDoc.p(message))

/** `--NAME N`, checked against `bound`; its description is followed by the range in words. */
export const boundedOption = (name: string, bound: NumberBound, description: string) =>
  Options.text(name).pipe(
    Options.withPseudoName("N"),
    Options.withDescription(description),
    Options.mapEffect((text) =>
      Either.match(parseBounded(`--${name}`, text, bound), {
        onLeft: (message) => Effect.fail(invalid(message)),
        onRight: Effect.succeed
      })
    )
  )

/** The accepted forms of a date or time, once: help and usage errors say the same. */
export const TIME_FORMS = "YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS], optionally ending in Z or ±HH:MM"

/** Why `text` is not a time `option` accepts, or undefined when it is one. */
export const timeProblem = (option: string, text: string): string | undefined => {
  const parsed = parseInstant(text)
  if (!(parsed instanceof TimeRangeError)) return undefined
  const why = parsed.message.startsWith("expected") ? `must be ${TIME_FORMS}` : `is ${parsed.message}`
  return `${option} ${why} (got ${quoteValue(text)})`
}

/**
 * Why `--since`/`--until` (each already a time) cannot be used together, or undefined: an empty
 * range asks for nothing, so it is a usage error rather than an empty answer.
 */
export const rangeProblem = (since: string | undefined, until: string | undefined): string | undefined => {
  if (since === undefined || until === undefined) return undefined
  const from = parseInstant(since)
  const to = parseInstant(until)
  if (typeof from !== "number" || typeof to !== "number") return undefined
  return to <= from ? `--until must be after --since (got --since ${since} --until ${until})` : undefined
}

/** `--NAME TIME`: the text as given (the daemon reads it), once it is known to be a time. */
export const timeOption = (name: string, description: string) =>
  Options.text(name).pipe(
    Options.withPseudoName("TIME"),
    Options.withDescription(description),
    Options.mapEffect((text) => {
      const problem = timeProblem(`--${name}`, text)
      return problem === undefined ? Effect.succeed(text) : Effect.fail(invalid(problem))
    })
  )

/** Up to this many choices are written out in help as `--agent codex|claude`; more get a placeholder. */
const INLINE_CHOICES = 3

/**
 * `--NAME CHOICE`: one of `choices`, else a usage error naming the option and listing them.
 * Help shows the choices inline (`--agent codex|claude`), or `--step STEP` with the list in the
 * description when there are more than three.
 */
export const choiceOption = <const C extends string>(
  name: string,
  choices: ReadonlyArray<C>,
  description: string,
  placeholder = name.toUpperCase().replace(/-/g, "_")
) => {
  const inline = choices.length <= INLINE_CHOICES
  return Options.text(name).pipe(
    Options.withPseudoName(inline ? choices.join("|") : placeholder),
    Options.withDescription(inline ? description : `${description} ${placeholder} is one of: ${choices.join(", ")}.`),
    Options.mapEffect((text) =>
      (choices as ReadonlyArray<string>).includes(text)
        ? Effect.succeed(text as C)
        : Effect.fail(invalid(`--${name} must be one of ${choices.join(", ")} (got ${quoteValue(text)})`))
    )
  )
}
