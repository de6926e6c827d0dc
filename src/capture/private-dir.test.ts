import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { nodeHookFs } from "../../layers/node-hook-fs.js"
import { privateDirState } from "./private-dir.js"

const isRoot = process.getuid?.() === 0

let base: string
beforeEach(() => {
  base = Fs.realpathSync(Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-private-")))
})
afterEach(() => Fs.rmSync(base, { recursive: true, force: true }))

describe("privateDirState", () => {
  it("accepts a 0700 folder of one's own, also through a link of one's own", () => {
    const dir = NodePath.join(base, "data", "blctx")
    Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    expect(privateDirState(nodeHookFs, dir)).toBe("private")
    Fs.symlinkSync(NodePath.join(base, "data"), NodePath.join(base, "mine"))
    expect(privateDirState(nodeHookFs, NodePath.join(base, "mine", "blctx"))).toBe("private")
  })

  it.skipIf(!isRoot)("(as root) refuses a folder reached through a link another user owns", () => {
    const dir = NodePath.join(base, "data", "blctx")
    Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    const shared = NodePath.join(base, "shared")
    Fs.mkdirSync(shared)
    Fs.chmodSync(shared, 0o1777)
    const link = NodePath.join(shared, "data")
    Fs.symlinkSync(NodePath.join(base, "data"), link)
    Fs.lchownSync(link, 65_534, 65_534)
    expect(privateDirState(nodeHookFs, NodePath.join(link, "blctx"))).toBe("unsafe")
  })
})
