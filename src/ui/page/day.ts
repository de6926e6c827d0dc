/** Days as a person's calendar shows them: the browser's time zone, `YYYY-MM-DD`. */
export const localDay = (iso: string | null): string => {
  if (iso === null) return "time unknown"
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return "time unknown"
  const pad = (n: number) => String(n).padStart(2, "0")
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`
}

/** Groups items by a key, keeping the order keys first appear in. */
export const groupBy = <A>(items: ReadonlyArray<A>, key: (a: A) => string): Array<[string, Array<A>]> => {
  const groups = new Map<string, Array<A>>()
  for (const item of items) {
    const k = key(item)
    const group = groups.get(k)
    if (group === undefined) groups.set(k, [item])
    else group.push(item)
  }
  return [...groups]
}

const DAY_MS = 86_400_000

/**
 * Every day from `first` to `last` (`YYYY-MM-DD`, inclusive), at most `limit` of the latest: a
 * chart's x axis, so days without activity show as gaps rather than being left out.
 */
export const daysBetween = (first: string, last: string, limit: number): Array<string> => {
  const start = Date.parse(`${first}T00:00:00Z`)
  const end = Date.parse(`${last}T00:00:00Z`)
  if (Number.isNaN(start) || Number.isNaN(end) || end < start) return []
  const days: Array<string> = []
  for (let t = Math.max(start, end - (limit - 1) * DAY_MS); t <= end; t += DAY_MS)
    days.push(new Date(t).toISOString().slice(0, 10))
  return days
}
