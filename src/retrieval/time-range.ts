import { Data } from "effect"

/** A date or time on the command line that blctx cannot read. */
export class TimeRangeError extends Data.TaggedError("TimeRangeError")<{
  readonly input: string
  readonly message: string
}> {}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/
const LOCAL_DATE_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?$/
const ZONED = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})$/i

/**
 * Parses `--since`/`--until`: a date (`2026-03-01`) or a date and time, with or without an
 * offset. Without an offset the value means UTC, so the same command gives the same answer on
 * every machine. Returns epoch milliseconds.
 */
export const parseInstant = (input: string): number | TimeRangeError => {
  const value = input.trim()
  let iso: string
  if (DATE_ONLY.test(value)) iso = `${value}T00:00:00Z`
  else if (LOCAL_DATE_TIME.test(value)) iso = `${value.replace(" ", "T")}Z`
  else if (ZONED.test(value)) iso = value.replace(" ", "T")
  else
    return new TimeRangeError({
      input,
      message: "expected YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS], optionally with Z or ±HH:MM (no offset means UTC)"
    })
  const ms = Date.parse(iso)
  if (Number.isNaN(ms)) return new TimeRangeError({ input, message: "not a real calendar date or time" })
  // Date.parse rolls 2026-02-30 over to March: refuse dates that do not round-trip.
  if (DATE_ONLY.test(value) && new Date(ms).toISOString().slice(0, 10) !== value) {
    return new TimeRangeError({ input, message: "not a real calendar date" })
  }
  return ms
}

/** `[since, until)`: since inclusive, until exclusive; either may be open. */
export interface TimeRange {
  readonly sinceMs: number | null
  readonly untilMs: number | null
}

export const resolveRange = (options: {
  readonly days?: number | undefined
  readonly since?: string | undefined
  readonly until?: string | undefined
  readonly nowMs: number
}): TimeRange | TimeRangeError => {
  if (options.days !== undefined && options.since !== undefined) {
    return new TimeRangeError({ input: "days and since", message: "give either days or since, not both" })
  }
  const since =
    options.since !== undefined
      ? parseInstant(options.since)
      : options.days !== undefined
        ? options.nowMs - options.days * 86_400_000
        : null
  if (since instanceof TimeRangeError) return since
  const until = options.until !== undefined ? parseInstant(options.until) : null
  if (until instanceof TimeRangeError) return until
  if (since !== null && until !== null && until <= since) {
    return new TimeRangeError({
      input: `${options.since ?? ""}..${options.until ?? ""}`,
      message: "--until must be after --since"
    })
  }
  return { sinceMs: since, untilMs: until }
}

/** Whether a message time falls in the range. An unknown time never matches a bounded range. */
export const inRange = (range: TimeRange, timestamp: string | null): boolean => {
  if (range.sinceMs === null && range.untilMs === null) return true
  if (timestamp === null) return false
  const ms = Date.parse(timestamp)
  if (Number.isNaN(ms)) return false
  return (range.sinceMs === null || ms >= range.sinceMs) && (range.untilMs === null || ms < range.untilMs)
}
