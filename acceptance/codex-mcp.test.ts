import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { checkOf, type DaemonHome, makeDaemonHome } from "./support/daemon-harness.js"
import { bundledProgram, installationArgs, runProcess } from "./support/isolated-home.js"

/** The real Codex CLI: the @openai/codex dev dependency, first on PATH. */
const bin = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..", "node_modules", ".bin")
const NAME = "base-layer-context"

interface CodexEntry {
  name: string
  enabled: boolean
  transport: { type: string; command: string; args: Array<string>; env: unknown }
}

describe("codex_mcp with the real codex in an isolated CODEX_HOME", () => {
  let h: DaemonHome | undefined
  afterEach(() => {
    h?.dispose()
    h = undefined
  })

  /**
   * A home whose CODEX_HOME is not Codex's default ($HOME/.codex), so the test shows blctx
   * honours it; created first, as Codex refuses a CODEX_HOME that does not exist.
   */
  const setUp = () => {
    const home = makeDaemonHome("detached")
    h = home
    const codexHome = NodePath.join(home.home, "codex-home")
    mkdirSync(codexHome, { mode: 0o700 })
    const env = { ...home.env, CODEX_HOME: codexHome, PATH: `${bin}:${process.env.PATH ?? ""}` }
    const blctx = (args: ReadonlyArray<string>) => home.blctx(args, { env })
    const codex = (args: ReadonlyArray<string>) => runProcess(NodePath.join(bin, "codex"), args, { env })
    const get = async (name: string) => {
      const result = await codex(["mcp", "get", name, "--json"])
      return result.code === 0 ? (JSON.parse(result.stdout) as CodexEntry) : undefined
    }
    return { home, codexHome, blctx, codex, get }
  }

  it("install --step codex_mcp registers it beside an unrelated entry; status passes; uninstall removes only it", async () => {
    const { home, codexHome, blctx, codex, get } = setUp()
    expect((await codex(["mcp", "add", "other", "--", "/bin/true"])).code).toBe(0)
    const other = await get("other")
    expect(other?.transport).toMatchObject({ type: "stdio", command: "/bin/true", args: [] })

    const install = await blctx(["install", "codex", "--step", "codex_mcp", "--json"])
    expect(install.code, install.stdout + install.stderr).toBe(0)
    // data_directory is its one prerequisite: no daemon is needed to register the server.
    const installed = JSON.parse(install.stdout) as { checks: Array<{ id: string; status: string }> }
    expect(installed.checks.filter((c) => c.status !== "skipped").map((c) => [c.id, c.status])).toEqual([
      ["data_directory", "passed"],
      ["codex_mcp", "passed"]
    ])
    const config = NodePath.join(codexHome, "config.toml")
    // `codex mcp add other` wrote config.toml first, so blctx keeps a backup before Codex rewrites it.
    expect(checkOf(install.stdout, "codex_mcp").detail).toMatch(
      new RegExp(
        `^registered ${NAME} in ${config} \\(${bundledProgram("blctx-mcp")}, installation ${home.installationId()}\\); .* the original is kept at ${config}\\.blctx-backup-`
      )
    )

    const registered = await get(NAME)
    expect(registered).toMatchObject({ name: NAME, enabled: true })
    expect(registered?.transport).toMatchObject({
      type: "stdio",
      command: process.execPath,
      args: [bundledProgram("blctx-mcp"), ...installationArgs(home, home.installationId())],
      env: null
    })
    expect(await get("other")).toEqual(other)
    const manifest = JSON.parse(readFileSync(NodePath.join(home.stateDir, "installation.json"), "utf8"))
    expect(manifest.codex_mcp).toEqual([
      { codex_home: codexHome, name: NAME, command: process.execPath, args: registered?.transport.args }
    ])

    const status = await blctx(["status", "--step", "codex_mcp", "--json"])
    expect(status.code, status.stdout).toBe(0)
    expect(checkOf(status.stdout, "codex_mcp").status).toBe("passed")

    const again = await blctx(["install", "codex", "--step", "codex_mcp", "--json"])
    expect(again.code).toBe(0)
    expect(checkOf(again.stdout, "codex_mcp").detail).toMatch(/ already registered \(.*\), left as is$/)

    const uninstall = await blctx(["uninstall", "codex", "--json"])
    expect(uninstall.code, uninstall.stdout).toBe(0)
    expect(checkOf(uninstall.stdout, "codex_mcp").status).toBe("passed")
    expect(checkOf(uninstall.stdout, "codex_mcp").detail).toMatch(
      new RegExp(`^removed ${NAME} from ${config}; kept the config.toml backups .*${config}\\.blctx-backup-`)
    )
    expect(await get(NAME)).toBeUndefined()
    expect(await get("other")).toEqual(other)

    // Nothing left to remove: a second uninstall says so and still exits 0.
    const twice = await blctx(["uninstall", "codex", "--json"])
    expect(twice.code, twice.stdout).toBe(0)
    expect(checkOf(twice.stdout, "codex_mcp").detail).toBe(
      "nothing to remove: blctx has no MCP server registered with Codex"
    )
  })

  it("codex mcp add rewrites config.toml: install says so, keeps a backup of the original bytes and puts the mode back", async () => {
    const { codexHome, blctx, get } = setUp()
    const config = NodePath.join(codexHome, "config.toml")
    const original = '# my Codex settings\nmodel = "o3" # the one I like\n\n# keep this\n[tui]\nnotifications = true\n'
    writeFileSync(config, original)
    chmodSync(config, 0o644)

    const install = await blctx(["install", "codex", "--step", "codex_mcp", "--json"])
    expect(install.code, install.stdout + install.stderr).toBe(0)
    expect(await get(NAME)).toMatchObject({ name: NAME, enabled: true })
    expect(statSync(config).mode & 0o777).toBe(0o644)
    const backups = readdirSync(codexHome).filter((f) => f.startsWith("config.toml.blctx-backup-"))
    expect(backups).toHaveLength(1)
    const backup = NodePath.join(codexHome, backups[0] as string)
    expect(readFileSync(backup, "utf8")).toBe(original)
    expect(statSync(backup).mode & 0o777).toBe(0o644)
    expect(statSync(backup).uid).toBe(process.getuid?.())
    const detail = checkOf(install.stdout, "codex_mcp").detail
    expect(detail).toContain(backup)
    expect(detail).toMatch(/comments/)

    // Uninstall (codex mcp remove rewrites it again) never deletes a backup, and says where they are.
    const uninstall = await blctx(["uninstall", "codex", "--json"])
    expect(uninstall.code, uninstall.stdout).toBe(0)
    expect(readFileSync(backup, "utf8")).toBe(original)
    expect(statSync(config).mode & 0o777).toBe(0o644)
    expect(checkOf(uninstall.stdout, "codex_mcp").detail).toContain(backup)
  })

  it("refuses an entry of the same name it did not register, and leaves it as it was", async () => {
    const { codexHome, blctx, codex, get } = setUp()
    expect((await codex(["mcp", "add", NAME, "--", "/bin/echo", "mine"])).code).toBe(0)
    const theirs = await get(NAME)

    const install = await blctx(["install", "codex", "--step", "codex_mcp", "--json"])
    expect(install.code).toBe(1)
    const check = checkOf(install.stdout, "codex_mcp")
    expect(check.status).toBe("failed")
    expect(check.detail).toBe(
      `${NodePath.join(codexHome, "config.toml")} already has an MCP server named ${NAME} that blctx did not register (stdio: /bin/echo mine, enabled); it was left untouched`
    )
    expect(check.remediation).toContain(`codex mcp remove ${NAME}`)
    expect(await get(NAME)).toEqual(theirs)

    const uninstall = await blctx(["uninstall", "codex", "--json"])
    expect(uninstall.code, uninstall.stdout).toBe(0)
    expect(await get(NAME)).toEqual(theirs)
  })

  it("uninstall --purge without codex keeps the record of what blctx owns; with codex back, the same uninstall removes all", async () => {
    const { home, blctx, get } = setUp()
    const install = await blctx(["install", "codex", "--step", "codex_mcp", "--json"])
    expect(install.code, install.stdout + install.stderr).toBe(0)
    const manifest = NodePath.join(home.stateDir, "installation.json")
    const path = (process.env.PATH ?? "").split(":").filter((d) => d !== bin && d !== "")

    const without = await home.blctx(["uninstall", "codex", "--purge", "--json"], { env: { PATH: path.join(":") } })
    expect(without.code, without.stdout).toBe(1)
    expect(checkOf(without.stdout, "codex_mcp").status).toBe("failed")
    const data = checkOf(without.stdout, "data_directory")
    expect(data.status).toBe("failed")
    expect(data.detail).toContain("codex_mcp did not remove what blctx put in place")
    // Still registered, and still blctx's: the manifest says so, deactivated.
    expect((await get(NAME))?.transport.args).toContain(home.installationId())
    expect(JSON.parse(readFileSync(manifest, "utf8"))).toMatchObject({ state: "inactive" })

    const again = await blctx(["uninstall", "codex", "--purge", "--json"])
    expect(again.code, again.stdout).toBe(0)
    expect(checkOf(again.stdout, "codex_mcp").detail).toContain(`removed ${NAME}`)
    expect(await get(NAME)).toBeUndefined()
    expect(existsSync(manifest)).toBe(false)
    expect(existsSync(home.database)).toBe(false)
  })

  it("a missing codex is a failure that names the install command", async () => {
    const { home } = setUp()
    const path = (process.env.PATH ?? "").split(":").filter((d) => d !== bin && d !== "")
    const install = await home.blctx(["install", "codex", "--step", "codex_mcp", "--json"], {
      env: { PATH: path.join(":") }
    })
    expect(install.code).toBe(1)
    expect(checkOf(install.stdout, "data_directory").status).toBe("passed")
    const check = checkOf(install.stdout, "codex_mcp")
    expect(check.detail).toBe(
      `the codex command was not found on PATH (${path.join(":")}); blctx registers its MCP server through the Codex CLI`
    )
    expect(check.remediation).toBe(
      "Install Codex: npm install -g @openai/codex (or put codex on PATH), then run: blctx install codex --step codex_mcp"
    )
  })
})
