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
