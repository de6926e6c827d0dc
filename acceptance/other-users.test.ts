import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { type IsolatedHome, makeIsolatedHome, parseJson } from "./support/isolated-home.js"

/**
 * Another local user must never get blctx to adopt their folders or files. Handing a folder to
 * another user needs root (CI runs as root); elsewhere these tests are skipped by name.
 */
const isRoot = process.getuid?.() === 0
/** A user id that is nobody on this machine: a stand-in for another local user. */
const OTHER_USER = 54_321

interface Check {
  id: string
  status: string
  detail: string
  remediation?: string
}
const checkIn = (stdout: string, id: string) => {
  const check = parseJson<{ checks: Array<Check> }>({ code: 0, stdout, stderr: "" }).checks.find((c) => c.id === id)
  if (check === undefined) throw new Error(`no ${id} in ${stdout}`)
  return check
}

let h: IsolatedHome
beforeEach(() => {
  h = makeIsolatedHome()
})
afterEach(() => h.dispose())

describe("folders of another local user", () => {
  it.skipIf(!isRoot)(
    "(as root) world-writable XDG parents with blctx folders another user made 0700: install refuses and names the owner",
    async () => {
      for (const parent of Object.values(h.xdg)) {
        Fs.mkdirSync(parent, { recursive: true })
        Fs.chmodSync(parent, 0o1777)
        const dir = NodePath.join(parent, "blctx")
        Fs.mkdirSync(dir, { mode: 0o700 })
        Fs.chownSync(dir, OTHER_USER, OTHER_USER)
      }
      const install = await h.blctx(["install", "codex", "--step", "data_directory", "--json"])
      expect(install.code).toBe(1)
      const check = checkIn(install.stdout, "data_directory")
      expect(check.status).toBe("failed")
      expect(check.detail).toContain(`belongs to user ${OTHER_USER}`)
      // The remedy names the folder and the way out (move it aside, or use folders of one's own).
      expect(check.remediation).toContain(NodePath.join(h.xdg.data, "blctx"))
      expect(check.remediation).toContain("XDG variable")
      // Nothing was written into their folders.
      for (const parent of Object.values(h.xdg)) expect(Fs.readdirSync(NodePath.join(parent, "blctx"))).toEqual([])
    }
  )

  it("a world-writable data parent without the sticky bit is refused with a remedy", async () => {
    Fs.mkdirSync(h.xdg.data, { recursive: true })
    Fs.chmodSync(h.xdg.data, 0o777)
    const install = await h.blctx(["install", "codex", "--step", "data_directory", "--json"])
    expect(install.code).toBe(1)
    const check = checkIn(install.stdout, "data_directory")
    expect(check.status).toBe("failed")
    expect(check.detail).toContain("sticky bit")
    expect(check.remediation).toContain("chmod +t")
    expect(Fs.existsSync(NodePath.join(h.xdg.data, "blctx"))).toBe(false)
  })

  it.skipIf(!isRoot)("(as root) a manifest another user owns is not trusted by any command", async () => {
    const install = await h.blctx(["install", "codex", "--step", "data_directory", "--json"])
    expect(install.code, install.stdout).toBe(0)
    const manifest = NodePath.join(h.xdg.state, "blctx", "installation.json")
    Fs.chownSync(manifest, OTHER_USER, OTHER_USER)
    const status = await h.blctx(["status", "--step", "data_directory", "--json"])
    expect(status.code).toBe(1)
    expect(checkIn(status.stdout, "data_directory").detail).toContain(`belongs to user ${OTHER_USER}`)
  })
})
