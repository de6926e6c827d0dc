import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { outsideFile } from "../src/fs/swapping-safe-fs.test-support.js"
import { writeAtomicLive } from "./node-safe-fs.js"

const writeFileReplacing = (path: string, text: string) => Effect.runPromise(writeAtomicLive(path, text, 0o600))

let dir: string | undefined
afterEach(() => {
  if (dir !== undefined) Fs.rmSync(dir, { recursive: true, force: true })
  dir = undefined
})

describe("writeAtomic on the live filesystem", () => {
  it("replaces a link at the path with a private file, never writing through it, and leaves no temp file", async () => {
    const d = Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-replacing-"))
    dir = d
    const target = outsideFile(NodePath.join(d, "outside.txt"))
    const path = NodePath.join(d, "blctxd.service")
    Fs.symlinkSync(target.path, path)
    await writeFileReplacing(path, "[Unit]\n")
    expect(Fs.lstatSync(path).isFile()).toBe(true)
    expect(Fs.statSync(path).mode & 0o777).toBe(0o600)
    expect(Fs.readFileSync(path, "utf8")).toBe("[Unit]\n")
    expect(target.untouched()).toBe(true)
    expect(Fs.readdirSync(d).sort()).toEqual(["blctxd.service", "outside.txt"])
  })

  it("uses a new, unpredictable temp name each time, so a link planted at the old pid-only name is ignored", async () => {
    const d = Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-replacing-"))
    dir = d
    const target = outsideFile(NodePath.join(d, "outside.txt"))
    const path = NodePath.join(d, "agent.plist")
    Fs.symlinkSync(target.path, `${path}.${process.pid}.tmp`)
    await writeFileReplacing(path, "<plist/>\n")
    await writeFileReplacing(path, "<plist version='1.0'/>\n")
    expect(Fs.readFileSync(path, "utf8")).toBe("<plist version='1.0'/>\n")
    expect(target.untouched()).toBe(true)
  })
})
