import * as Fs from "node:fs"
import * as NodePath from "node:path"

/** SQLite's and the kernel's ways of saying the filesystem has no room left. */
const FULL_CODES = new Set(["SQLITE_FULL", "ENOSPC"])
/** ENOSPC as a negative errno (libuv) or a positive one. */
const ENOSPC = 28

/**
 * True when `error`, or anything in its chain of causes, says the disk is full: SQLite's
 * SQLITE_FULL, or the filesystem's ENOSPC. Wrapping errors (SqlError "Failed to execute statement",
 * a job's own error) keep the driver's error as `cause`, so the chain is walked.
 */
export const isDiskFull = (error: unknown): boolean => {
  const seen = new Set<unknown>()
  let current: unknown = error
  while (typeof current === "object" && current !== null && !seen.has(current)) {
    seen.add(current)
    const record = current as { readonly code?: unknown; readonly errno?: unknown; readonly cause?: unknown }
    if (typeof record.code === "string" && FULL_CODES.has(record.code)) return true
    if (typeof record.errno === "number" && Math.abs(record.errno) === ENOSPC) return true
    current = record.cause
  }
  return false
}

/** Bytes an unprivileged writer can still use on the filesystem holding `dir`, if it can be asked. */
export const freeBytes = (dir: string): number | undefined => {
  try {
    const stats = Fs.statfsSync(dir)
    return Number(stats.bavail) * Number(stats.bsize)
  } catch {
    return undefined
  }
}

const size = (bytes: number): string => {
  const units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return unit === 0 ? `${value} bytes` : `${value.toFixed(1)} ${units[unit]}`
}

/** What to tell a person whose database could not be written because its disk is full. */
export const diskFullMessage = (database: string, free: number | undefined): string => {
  const dir = NodePath.dirname(database)
  const left = free === undefined ? "free space unknown" : `${size(free)} free`
  return `the disk is full: SQLite could not write ${database} (${left} on that filesystem); free space on ${dir} then rerun blctx index`
}
