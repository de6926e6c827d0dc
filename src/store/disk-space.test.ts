import { describe, expect, it } from "vitest"
import { diskFullMessage, isDiskFull } from "./disk-space.js"

const sqliteFull = Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" })

describe("disk-full detection", () => {
  it("recognises SQLITE_FULL and ENOSPC through wrapping causes", () => {
    const wrapped = Object.assign(new Error("Failed to execute statement"), { cause: sqliteFull })
    expect(isDiskFull(wrapped)).toBe(true)
    expect(isDiskFull({ message: "could not be stored", cause: { cause: wrapped } })).toBe(true)
    expect(isDiskFull(Object.assign(new Error("write failed"), { code: "ENOSPC" }))).toBe(true)
    expect(isDiskFull(Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR_WRITE", errno: -28 }))).toBe(
      true
    )
  })

  it("does not call other failures a full disk", () => {
    expect(isDiskFull(Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" }))).toBe(false)
    expect(isDiskFull(new Error("Failed to execute statement"))).toBe(false)
    expect(isDiskFull(undefined)).toBe(false)
    expect(isDiskFull("SQLITE_FULL is mentioned in a string only")).toBe(false)
  })

  it("names the database, the free space left and the remedy", () => {
    const message = diskFullMessage("/data/blctx/context.db", 12 * 1024)
    expect(message).toContain("disk is full")
    expect(message).toContain("/data/blctx/context.db")
    expect(message).toContain("12.0 KiB free")
    expect(message).toContain("free space on /data/blctx then rerun blctx index")
  })

  it("says when the free space could not be measured", () => {
    expect(diskFullMessage("/data/blctx/context.db", undefined)).toContain("free space unknown")
  })

  it("is not fooled by a cyclic cause chain", () => {
    const a: { message: string; cause?: unknown } = { message: "a" }
    a.cause = { message: "b", cause: a }
    expect(isDiskFull(a)).toBe(false)
  })
})
