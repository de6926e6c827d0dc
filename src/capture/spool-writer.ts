import * as NodePath from "node:path"
import type { CaptureRecord } from "./capture-record.js"
import type { HookFs } from "./hook-fs.js"
import { uniqueSuffix } from "./unique-name.js"

/**
 * The spool's file names. A record's final name is `<received-ms>-<pid>-<random>.json`, so names
 * sort by arrival and never collide between handlers; a temp name starts with "." and ends with
 * ".tmp", and the drain ignores it (it is what a handler killed mid-write leaves behind).
 */
export const SPOOL_RECORD_PATTERN = /^\d+-\d+-[0-9a-f]+\.json$/
export const isSpoolTempName = (name: string) => name.startsWith(".") && name.endsWith(".tmp")

export const spoolRecordName = (receivedMs: number) => `${receivedMs}-${process.pid}-${uniqueSuffix()}.json`

/**
 * Writes one record into the spool atomically: whole into a temp file in the same directory
 * (0600, created exclusively), then renamed to its final name, so nothing partial is ever
 * visible under a final name. No fsync: a record lost to a power cut is re-captured by the
 * session's next event, since a record only says which transcript to (re)index.
 */
export const writeSpoolRecord = (fs: HookFs, spoolDir: string, record: CaptureRecord, receivedMs: number): string => {
  const name = spoolRecordName(receivedMs)
  const temp = NodePath.join(spoolDir, `.${name}.tmp`)
  const path = NodePath.join(spoolDir, name)
  try {
    fs.writeNew(temp, `${JSON.stringify(record)}\n`)
    fs.rename(temp, path)
    return path
  } catch (error) {
    fs.remove(temp)
    throw error
  }
}
