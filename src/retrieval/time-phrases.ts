/**
 * Date phrases in a search query ("what did we do on billing last week?"): found, turned into a
 * `[since, until)` range in the person's time zone relative to a given now, and taken out of the
 * words that are ranked. Plain code without effect, so any caller can use it; the daemon applies
 * it to every search it answers (decision 0020).
 */

/** A date phrase found in a query, the range it means, and the query without it. */
export interface FoundTimePhrase {
  /** The phrase as written in the query (`last week`, `on Monday`). */
  readonly phrase: string
  /** Inclusive start, ISO 8601 in UTC; null when open. */
  readonly since: string | null
  /** Exclusive end, ISO 8601 in UTC; null when open. */
  readonly until: string | null
  /** The query with the phrase removed: what is ranked. */
  readonly rest: string
}

const WEEKDAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
const MONTHS = [
  "january",
  "february",
  "march",
  "april",
  "may",
  "june",
  "july",
  "august",
  "september",
  "october",
  "november",
  "december"
]
const NUMBER_WORDS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10
}

/** A calendar day, months 0-based as `Date` has them. */
export interface Day {
  readonly year: number
  readonly month: number
  readonly day: number
}

/** One formatter per zone and kind: making one costs about 0.1 ms, using it a few µs. */
const formatters = new Map<string, Intl.DateTimeFormat>()
const formatter = (kind: "day" | "time", timeZone: string) => {
  const key = `${kind} ${timeZone}`
  let found = formatters.get(key)
  if (found === undefined) {
    found = new Intl.DateTimeFormat(
      "en-US",
      kind === "day"
        ? { timeZone, year: "numeric", month: "numeric", day: "numeric", weekday: "long" }
        : {
            timeZone,
            hourCycle: "h23",
            year: "numeric",
            month: "numeric",
            day: "numeric",
            hour: "numeric",
            minute: "numeric",
            second: "numeric"
          }
    )
    formatters.set(key, found)
  }
  return found
}

/** The calendar day and weekday (0 = Sunday) `ms` falls on in `timeZone`. */
export const dayIn = (ms: number, timeZone: string): Day & { readonly weekday: number } => {
  const parts = formatter("day", timeZone).formatToParts(new Date(ms))
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? ""
  return {
    year: Number(part("year")),
    month: Number(part("month")) - 1,
    day: Number(part("day")),
    weekday: WEEKDAYS.indexOf(part("weekday").toLowerCase())
  }
}

/** How far `timeZone`'s wall clock is ahead of UTC at `ms`. */
export const offsetAt = (ms: number, timeZone: string): number => {
  const parts = formatter("time", timeZone).formatToParts(new Date(ms))
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0)
  const wall = Date.UTC(n("year"), n("month") - 1, n("day"), n("hour"), n("minute"), n("second"))
  return wall - Math.floor(ms / 1000) * 1000
}

/** The instant a calendar day starts in `timeZone` (its midnight; days roll over, so day 0 or 32 are fine). */
export const startOf = (day: Day, timeZone: string): number => {
  const wall = Date.UTC(day.year, day.month, day.day)
  const guess = wall - offsetAt(wall, timeZone)
  // Once more at the guess: the offset may differ there (a DST change between the two).
  return wall - offsetAt(guess, timeZone)
}

export const plusDays = (day: Day, n: number): Day => ({ ...day, day: day.day + n })
const iso = (ms: number) => new Date(ms).toISOString()

/** Whether `timeZone` is an IANA zone this runtime knows. */
export const isTimeZone = (timeZone: string): boolean => {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone })
    return true
  } catch {
    return false
  }
}

/** The zone of this process (the TZ variable or the system's), as an IANA name. */
export const localTimeZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone ?? "UTC"

type Range = readonly [since: number | null, until: number | null]

interface Rule {
  /** Matched case-insensitively against the query; groups feed `range`. */
  readonly pattern: string
  readonly range: (groups: ReadonlyArray<string>, now: number, timeZone: string) => Range | null
}

const countOf = (word: string): number => NUMBER_WORDS[word.toLowerCase()] ?? Number(word)
const COUNT = String.raw`(\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten)`
const WEEKDAY = `(${WEEKDAYS.join("|")})`
const MONTH = `(${MONTHS.join("|")})`
const ISO_DAY = String.raw`(\d{4}-\d{2}-\d{2})`

/** A `YYYY-MM-DD` that is a real calendar day, or null. */
const isoDay = (text: string): Day | null => {
  const [y, m, d] = text.split("-").map(Number) as [number, number, number]
  const ms = Date.UTC(y, m - 1, d)
  return new Date(ms).toISOString().slice(0, 10) === text ? { year: y, month: m - 1, day: d } : null
}

/** The day range `[first, first + days)` in the zone. */
const days = (first: Day, n: number, timeZone: string): Range => [
  startOf(first, timeZone),
  startOf(plusDays(first, n), timeZone)
]

/** Monday of the week `now` is in (weeks start on Monday, as ISO 8601 has them). */
const mondayOf = (now: number, timeZone: string): Day => {
  const today = dayIn(now, timeZone)
  return plusDays(today, -((today.weekday + 6) % 7))
}

/** The most recent `weekday` on or before today (strictly before with `before`). */
const lastWeekday = (now: number, timeZone: string, weekday: number, before: boolean): Day => {
  const today = dayIn(now, timeZone)
  let back = (today.weekday - weekday + 7) % 7
  if (back === 0 && before) back = 7
  return plusDays(today, -back)
}

const RULES: ReadonlyArray<Rule> = [
  { pattern: "today", range: (_, now, tz) => days(dayIn(now, tz), 1, tz) },
  { pattern: "yesterday", range: (_, now, tz) => days(plusDays(dayIn(now, tz), -1), 1, tz) },
  { pattern: "(?:this|the current) week", range: (_, now, tz) => days(mondayOf(now, tz), 7, tz) },
  {
    pattern: "(?:last|the previous|previous) week",
    range: (_, now, tz) => days(plusDays(mondayOf(now, tz), -7), 7, tz)
  },
  {
    pattern: "(?:this|the current) month",
    range: (_, now, tz) => {
      const today = dayIn(now, tz)
      return [startOf({ ...today, day: 1 }, tz), startOf({ ...today, month: today.month + 1, day: 1 }, tz)]
    }
  },
  {
    pattern: "(?:last|the previous|previous) month",
    range: (_, now, tz) => {
      const today = dayIn(now, tz)
      return [startOf({ ...today, month: today.month - 1, day: 1 }, tz), startOf({ ...today, day: 1 }, tz)]
    }
  },
  {
    pattern: `(?:in the )?(?:last|past) ${COUNT} (day|week)s?`,
    range: ([count, unit], now, tz) => {
      const n = countOf(count ?? "") * (unit?.toLowerCase() === "week" ? 7 : 1)
      return n < 1 ? null : [startOf(plusDays(dayIn(now, tz), -n), tz), null]
    }
  },
  {
    pattern: `${COUNT} (day|week)s? ago`,
    range: ([count, unit], now, tz) => {
      const n = countOf(count ?? "")
      if (n < 1) return null
      if (unit?.toLowerCase() === "week") return days(plusDays(mondayOf(now, tz), -7 * n), 7, tz)
      return days(plusDays(dayIn(now, tz), -n), 1, tz)
    }
  },
  {
    pattern: `last ${WEEKDAY}`,
    range: ([name], now, tz) => days(lastWeekday(now, tz, WEEKDAYS.indexOf(name?.toLowerCase() ?? ""), true), 1, tz)
  },
  {
    pattern: `on ${WEEKDAY}`,
    range: ([name], now, tz) => days(lastWeekday(now, tz, WEEKDAYS.indexOf(name?.toLowerCase() ?? ""), false), 1, tz)
  },
  {
    pattern: `in ${MONTH}(?: (\\d{4}))?`,
    range: ([name, year], now, tz) => {
      const month = MONTHS.indexOf(name?.toLowerCase() ?? "")
      const today = dayIn(now, tz)
      // Without a year, the latest such month that has begun: "in December" in March is last year's.
      const y = year !== undefined ? Number(year) : month <= today.month ? today.year : today.year - 1
      return [startOf({ year: y, month, day: 1 }, tz), startOf({ year: y, month: month + 1, day: 1 }, tz)]
    }
  },
  {
    pattern: `since ${ISO_DAY}`,
    range: ([text], _, tz) => {
      const day = isoDay(text ?? "")
      return day === null ? null : [startOf(day, tz), null]
    }
  },
  {
    pattern: `before ${ISO_DAY}`,
    range: ([text], _, tz) => {
      const day = isoDay(text ?? "")
      return day === null ? null : [null, startOf(day, tz)]
    }
  },
  {
    pattern: `on ${ISO_DAY}`,
    range: ([text], _, tz) => {
      const day = isoDay(text ?? "")
      return day === null ? null : days(day, 1, tz)
    }
  }
]

/**
 * A phrase counts only as words of its own: not touching letters, digits or the characters code
 * is written with (`last_week`, `yesterday.ts`, `--since`, `on-monday`).
 */
const BEFORE = String.raw`(?<![\p{L}\p{N}_\-./\\@#$\x60'"])`
const AFTER = String.raw`(?![\p{L}\p{N}_\-/\\@#$\x60'"]|\.[\p{L}\p{N}_])`
const COMPILED = RULES.map((rule) => ({ ...rule, regex: new RegExp(`${BEFORE}${rule.pattern}${AFTER}`, "giu") }))

/** Spans of the query inside quotes or backquotes: searched as written, never read as dates. */
const quotedSpans = (query: string): ReadonlyArray<readonly [number, number]> => {
  const spans: Array<readonly [number, number]> = []
  for (const m of query.matchAll(/"[^"]*"|\x60[^\x60]*\x60|“[^”]*”|(?<![\p{L}\p{N}])'[^']*'(?![\p{L}\p{N}])/gu)) {
    spans.push([m.index, m.index + m[0].length])
  }
  return spans
}

/** Leftover glue once a phrase is cut out: the space runs, and a dangling "on"/"in"/"from" at the end. */
const tidy = (text: string) =>
  text
    .replace(/\s+([?!.,;:])/g, "$1")
    .replace(/\s{2,}/g, " ")
    .replace(/\b(?:on|in|from|during|over)\s*([?!.]?)\s*$/i, "$1")
    .trim()

/**
 * The first date phrase of `query` outside quotes and code, as a range in `timeZone` relative
 * to `nowMs`, or null when there is none. Only one phrase is read: a second stays as words.
 */
export const findTimePhrase = (query: string, nowMs: number, timeZone: string): FoundTimePhrase | null => {
  const quoted = quotedSpans(query)
  const inQuotes = (start: number, end: number) => quoted.some(([a, b]) => start < b && end > a)
  let best: { start: number; end: number; range: Range } | null = null
  for (const rule of COMPILED) {
    for (const m of query.matchAll(rule.regex)) {
      const start = m.index
      const end = start + m[0].length
      if (inQuotes(start, end)) continue
      if (best !== null && (start > best.start || (start === best.start && end <= best.end))) continue
      const range = rule.range(m.slice(1), nowMs, timeZone)
      if (range !== null) best = { start, end, range }
    }
  }
  if (best === null) return null
  const [since, until] = best.range
  return {
    phrase: query.slice(best.start, best.end),
    since: since === null ? null : iso(since),
    until: until === null ? null : iso(until),
    rest: tidy(`${query.slice(0, best.start)} ${query.slice(best.end)}`)
  }
}
