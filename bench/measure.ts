/** Small helpers every benchmark uses to print figures the same way. */

export const percentile = (sortedMs: ReadonlyArray<number>, p: number): number => {
  if (sortedMs.length === 0) return Number.NaN
  const index = Math.min(sortedMs.length - 1, Math.max(0, Math.ceil((p / 100) * sortedMs.length) - 1))
  return sortedMs[index] ?? Number.NaN
}

export const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`

export const line = (name: string, value: string) => console.log(`  ${name.padEnd(44)} ${value}`)

export const section = (title: string) => console.log(`\n## ${title}`)

/** Times `f` `n` times and returns the sorted durations in milliseconds. */
export const timeMany = async (n: number, f: () => Promise<unknown>): Promise<Array<number>> => {
  const out: Array<number> = []
  for (let i = 0; i < n; i++) {
    const start = process.hrtime.bigint()
    await f()
    out.push(Number(process.hrtime.bigint() - start) / 1e6)
  }
  return out.sort((a, b) => a - b)
}
