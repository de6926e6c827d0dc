import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { stepIdsFor } from "../src/domain/step-id.js"
import { builtProgram, type IsolatedHome, makeIsolatedHome, parseJson, runProcess } from "./support/isolated-home.js"

interface JsonCheck {
  id: string
  status: string
  detail: string
  remediation?: string
  skip_reason?: string
  dependencies: Array<string>
}
interface JsonReport {
  command: string
  target: string
  ready: boolean
  exit_code: number
  selected_step: string | null
  checks: Array<JsonCheck>
}

let h: IsolatedHome
beforeEach(() => {
  h = makeIsolatedHome()
})
afterEach(() => h.dispose())

const dataDir = () => NodePath.join(h.xdg.data, "blctx")
const database = () => NodePath.join(dataDir(), "context.db")
const manifestPath = () => NodePath.join(h.xdg.state, "blctx", "installation.json")
const installationId = () => JSON.parse(Fs.readFileSync(manifestPath(), "utf8")).installation_id as string

/** Runs a command with --json and returns its one document, checking stdout holds nothing else. */
const json = async (args: ReadonlyArray<string>) => {
  const result = await h.blctx([...args, "--json"])
  const report = parseJson<JsonReport>(result)
  expect(report.exit_code).toBe(result.code)
  return report
}
const check = (report: JsonReport, id: string) => {
  const found = report.checks.find((c) => c.id === id)
  if (found === undefined) throw new Error(`no ${id} check in ${JSON.stringify(report)}`)
  return found
}
const dataDirectoryStatus = async () => check(await json(["status", "--step", "data_directory"]), "data_directory")

describe("blctx install codex: data_directory", () => {
  it("red → install → green → uninstall → red → reinstall (same id) → green → idempotent → purge", async () => {
    expect((await dataDirectoryStatus()).status).toBe("failed")

    const installed = await json(["install", "codex", "--step", "data_directory"])
    expect(installed).toMatchObject({ command: "install", target: "codex", ready: false, exit_code: 0 })
    expect(installed.selected_step).toBe("data_directory")
    expect(check(installed, "data_directory").status).toBe("passed")
    const id = installationId()
    expect((await dataDirectoryStatus()).status).toBe("passed")
    expect(Fs.statSync(dataDir()).mode & 0o777).toBe(0o700)
    expect(Fs.statSync(database()).mode & 0o777).toBe(0o600)
    expect(Fs.statSync(manifestPath()).mode & 0o777).toBe(0o600)

    const uninstalled = await json(["uninstall", "codex"])
    expect(check(uninstalled, "data_directory").status).toBe("passed")
    expect(Fs.existsSync(database())).toBe(true)
    const red = await dataDirectoryStatus()
    expect(red.status).toBe("failed")
    expect(red.detail).toContain("retained files alone do not pass")

    await json(["install", "codex", "--step", "data_directory"])
    expect(installationId()).toBe(id)
    expect((await dataDirectoryStatus()).status).toBe("passed")

    const again = await json(["install", "codex", "--step", "data_directory"])
    expect(again.exit_code).toBe(0)
    expect(installationId()).toBe(id)

    // A directory that existed before blctx and a file blctx does not know both survive purge.
    const unknown = NodePath.join(dataDir(), "my-notes.txt")
    Fs.writeFileSync(unknown, "keep me")
    const purged = await json(["uninstall", "codex", "--purge"])
    expect(check(purged, "data_directory").status).toBe("passed")
    expect(Fs.readFileSync(unknown, "utf8")).toBe("keep me")
    expect(Fs.existsSync(database())).toBe(false)
    expect(Fs.existsSync(manifestPath())).toBe(false)
    expect(Fs.existsSync(NodePath.join(h.xdg.state, "blctx"))).toBe(false)
    expect(Fs.existsSync(NodePath.join(h.home, "xdg"))).toBe(true)
  })

  it("refuses an unowned context.db without touching it", async () => {
    Fs.mkdirSync(dataDir(), { recursive: true, mode: 0o700 })
    Fs.writeFileSync(database(), "not ours", { mode: 0o600 })
    const report = await json(["install", "codex", "--step", "data_directory"])
    const c = check(report, "data_directory")
    expect(report.exit_code).toBe(1)
    expect(c.status).toBe("failed")
    expect(c.detail).toContain(database())
    expect(c.remediation).toBeTypeOf("string")
    expect(Fs.readFileSync(database(), "utf8")).toBe("not ours")
  })

  it("refuses a symlinked data directory", async () => {
    const target = NodePath.join(h.home, "elsewhere")
    Fs.mkdirSync(target, { mode: 0o700 })
    Fs.mkdirSync(h.xdg.data, { recursive: true, mode: 0o700 })
    Fs.symlinkSync(target, dataDir())
    const c = check(await json(["install", "codex", "--step", "data_directory"]), "data_directory")
    expect(c.status).toBe("failed")
    expect(c.detail).toContain("symbolic link")
    expect(Fs.readdirSync(target)).toEqual([])
  })

  it("refuses a 0755 directory and leaves its mode alone", async () => {
    Fs.mkdirSync(dataDir(), { recursive: true })
    Fs.chmodSync(dataDir(), 0o755)
    const c = check(await json(["install", "codex", "--step", "data_directory"]), "data_directory")
    expect(c.status).toBe("failed")
    expect(c.detail).toContain("0755")
    expect(c.remediation).toContain("chmod 700")
    expect(Fs.statSync(dataDir()).mode & 0o777).toBe(0o755)
  })

  it("accepts a config folder made by `mkdir -p` (0755, it holds no secrets) and refuses one others can write", async () => {
    const configDir = NodePath.join(h.xdg.config, "blctx")
    Fs.mkdirSync(configDir, { recursive: true, mode: 0o755 })
    Fs.chmodSync(configDir, 0o755)
    Fs.writeFileSync(NodePath.join(configDir, "config.json"), "{}\n", { mode: 0o644 })
    const ok = check(await json(["install", "codex", "--step", "data_directory"]), "data_directory")
    expect(ok.status, ok.detail).toBe("passed")
    expect(Fs.statSync(configDir).mode & 0o777).toBe(0o755)
    const status = check(await json(["status", "--step", "data_directory"]), "data_directory")
    expect(status.status, status.detail).toBe("passed")

    Fs.chmodSync(configDir, 0o775)
    const refused = check(await json(["status", "--step", "data_directory"]), "data_directory")
    expect(refused.status).toBe("failed")
    expect(refused.detail).toContain("0775")
    expect(refused.remediation).toContain("chmod go-w")
    expect(Fs.statSync(configDir).mode & 0o777).toBe(0o775)
  })

  it("refuses a corrupted manifest and does not overwrite it", async () => {
    await json(["install", "codex", "--step", "data_directory"])
    Fs.writeFileSync(manifestPath(), "{ broken", { mode: 0o600 })
    const install = check(await json(["install", "codex", "--step", "data_directory"]), "data_directory")
    expect(install.status).toBe("failed")
    expect(install.detail).toContain(manifestPath())
    expect(Fs.readFileSync(manifestPath(), "utf8")).toBe("{ broken")
    const status = check(await json(["status"]), "data_directory")
    expect(status.status).toBe("failed")
  })
})

describe("blctx report contract", () => {
  it("status --json (nothing installed: codex) lists its eleven ids in display order; steps not built yet never pass", async () => {
    const report = await json(["status"])
    expect(report.checks.map((c) => c.id)).toEqual([...stepIdsFor(["codex"])])
    expect(report.ready).toBe(false)
    for (const c of report.checks) {
      expect(["failed", "blocked"]).toContain(c.status)
      expect(c.remediation).toBeTypeOf("string")
    }
  })

  it("--json and --no-color work before the command and after its arguments", async () => {
    await json(["install", "codex", "--step", "data_directory"])
    const before = await h.blctx(["--json", "status", "--step", "data_directory"])
    const after = await h.blctx(["status", "--step", "data_directory", "--json"])
    expect(before.code).toBe(0)
    expect(JSON.parse(before.stdout)).toEqual(JSON.parse(after.stdout))
    const plainBefore = await h.blctx(["--no-color", "status", "--step", "data_directory"])
    const plainAfter = await h.blctx(["status", "--step", "data_directory", "--no-color"])
    expect(plainBefore.stdout).toBe(plainAfter.stdout)
    expect(plainBefore.stdout).toContain("[passed]")
    expect(plainBefore.stdout).not.toContain("\u001b[")
  })

  it("exit codes: 0 passed, 1 failed, 2 usage errors, --help 0", async () => {
    expect((await h.blctx(["status", "--step", "data_directory"])).code).toBe(1)
    expect((await h.blctx(["install", "codex", "--step", "data_directory"])).code).toBe(0)
    expect((await h.blctx(["status", "--step", "data_directory"])).code).toBe(0)
    expect((await h.blctx(["status", "--step", "nope"])).code).toBe(2)
    expect((await h.blctx(["frobnicate"])).code).toBe(2)
    expect((await h.blctx(["install", "codex", "--no-history", "--step", "history_index"])).code).toBe(2)
    expect((await h.blctx(["install", "codex", "--hooks", "--no-hooks"])).code).toBe(2)
    expect((await h.blctx(["--help"])).code).toBe(0)
    expect((await h.blctx(["install", "--help"])).code).toBe(0)
  })

  it("a usage error with --json prints one JSON document and exits 2", async () => {
    const result = await h.blctx(["status", "--step", "nope", "--json"])
    expect(result.code).toBe(2)
    const doc = JSON.parse(result.stdout)
    expect(doc.exit_code).toBe(2)
    expect(doc.error._tag).toBe("CliUsageError")
  })

  it("--no-history skips exactly the history steps with skip_reason no_history", async () => {
    const report = await json(["status", "--no-history"])
    const skipped = report.checks.filter((c) => c.status === "skipped")
    expect(skipped.map((c) => c.id)).toEqual(["session_discovery", "history_index", "history_retrieval"])
    expect(skipped.every((c) => c.skip_reason === "no_history")).toBe(true)
  })

  it("install prerequisites run first and are reported in dependencies", async () => {
    const report = await json(["install", "codex", "--step", "codex_hooks", "--no-hooks"])
    expect(report.checks.map((c) => c.id)).toEqual(["data_directory", "codex_hooks"])
    expect(check(report, "codex_hooks").dependencies).toEqual(["data_directory"])
    expect(check(report, "data_directory").status).toBe("passed")
  })

  it("declining hooks is an explicit, recorded, successful choice; the non-interactive default installs them", async () => {
    const declined = await json(["install", "codex", "--no-hooks"])
    expect(check(declined, "codex_hooks").status).toBe("passed")
    expect(check(await json(["status", "--step", "codex_hooks"]), "codex_hooks").status).toBe("passed")
    const other = makeIsolatedHome()
    try {
      const result = await other.blctx(["install", "codex", "--json"])
      const hooks = JSON.parse(result.stdout).checks.find((c: JsonCheck) => c.id === "codex_hooks")
      // Installed, and waiting for the person to trust them in Codex: blctx never trusts them itself.
      expect(hooks.status, hooks.detail).toBe("passed")
      expect(hooks.detail).toContain("approve on next Codex launch: open /hooks and trust the blctx hooks")
    } finally {
      other.dispose()
    }
  })

  it("an interactive install asks about hooks on a TTY and records a decline", async () => {
    const cli = builtProgram("cli")
    // `script` gives the CLI a real pseudo-terminal; the answer arrives after the question.
    const result = await runProcess(
      "bash",
      ["-c", `(sleep 2; printf 'n\\n'; sleep 2) | script -qfec "${process.execPath} ${cli} install codex" /dev/null`],
      { env: { ...h.env, NO_COLOR: undefined, TERM: "xterm" } }
    )
    expect(result.stdout).toContain("Install the optional Codex hooks")
    expect(JSON.parse(Fs.readFileSync(manifestPath(), "utf8")).choices.hooks).toBe("declined")
  })
})
