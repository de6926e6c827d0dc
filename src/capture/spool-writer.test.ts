import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import * as v from "valibot"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { nodeHookFs } from "../../layers/node-hook-fs.js"
import { CaptureRecord } from "./capture-record.js"
import { isSpoolTempName, SPOOL_RECORD_PATTERN, writeSpoolRecord } from "./spool-writer.js"

let dir: string
beforeEach(() => {
  dir = Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-spool-"))
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

const record: CaptureRecord = {
  v: 1,
  installation_id: "6f7c3a8e-2f1b-4f0e-9a51-0a4b6c2d9e11",
  generation: "0d3f8e6a-5b4c-4a2e-8f1d-7c6b5a4e3d21",
  agent: "codex",
  agent_home: "/home/me/.codex",
  event: "Stop",
  event_session_id: "s-1",
  binding_key: "1b2c3d4e-5f60-4718-9a2b-3c4d5e6f7a8b",
  session_uuid: "2b2c3d4e-5f60-4718-9a2b-3c4d5e6f7a8b",
  turn_id: null,
  cwd: "/tmp/proj",
  transcript_path: null,
  received_at: "2026-11-30T10:00:00.000Z"
}

describe("writeSpoolRecord", () => {
  it("writes one whole, private record under a final name that sorts by arrival, leaving no temp file", () => {
    const path = writeSpoolRecord(nodeHookFs, dir, record, 1_764_496_800_000)
    const name = NodePath.basename(path)
    expect(name).toMatch(SPOOL_RECORD_PATTERN)
    expect(name.startsWith(`1764496800000-${process.pid}-`)).toBe(true)
    expect(Fs.readdirSync(dir)).toEqual([name])
    expect(v.parse(CaptureRecord, JSON.parse(Fs.readFileSync(path, "utf8")))).toEqual(record)
    expect(Fs.statSync(path).mode & 0o777).toBe(0o600)
  })

  it("gives every record its own name", () => {
    const names = new Set(
      Array.from({ length: 100 }, () => NodePath.basename(writeSpoolRecord(nodeHookFs, dir, record, 1)))
    )
    expect(names.size).toBe(100)
  })

  it("leaves nothing behind when it cannot write", () => {
    const missing = NodePath.join(dir, "gone")
    expect(() => writeSpoolRecord(nodeHookFs, missing, record, 1)).toThrow()
    expect(Fs.readdirSync(dir)).toEqual([])
  })

  it("temp names are the ones the drain ignores", () => {
    expect(isSpoolTempName(".1-2-ab.json.tmp")).toBe(true)
    expect(SPOOL_RECORD_PATTERN.test(".1-2-ab.json.tmp")).toBe(false)
    expect(isSpoolTempName("1-2-ab.json")).toBe(false)
  })
})
