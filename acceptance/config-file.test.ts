import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { type IsolatedHome, makeIsolatedHome, parseJson } from "./support/isolated-home.js"

interface Check {
  id: string
  status: string
  detail: string
  remediation?: string
}

let h: IsolatedHome
beforeEach(() => {
  h = makeIsolatedHome()
})
afterEach(() => h.dispose())

const configPath = () => NodePath.join(h.xdg.config, "blctx", "config.json")

describe("config.json", () => {
  it("a 1 GiB-sized (sparse) file is refused by its size before it is read, naming the size", async () => {
    Fs.mkdirSync(NodePath.dirname(configPath()), { recursive: true, mode: 0o700 })
    // Sparse: the size is real, the disk blocks are not.
    const fd = Fs.openSync(configPath(), "w", 0o600)
    Fs.ftruncateSync(fd, 1024 * 1024 * 1024)
    Fs.closeSync(fd)
    const result = await h.blctx(["status", "--step", "embedding_model", "--json"])
    const check = parseJson<{ checks: Array<Check> }>(result).checks.find((c) => c.id === "embedding_model")
    expect(check?.status).toBe("failed")
    expect(check?.detail).toContain("1073741824 bytes")
    expect(check?.detail).toContain(configPath())
  })
})
