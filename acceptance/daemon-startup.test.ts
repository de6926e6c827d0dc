import { spawn } from "node:child_process"
import { lstatSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import * as NodePath from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { type DaemonHome, makeDaemonHome, waitFor } from "./support/daemon-harness.js"
import { builtProgram, installationArgs, runProcess } from "./support/isolated-home.js"

const daemonArgs = (home: DaemonHome, id = home.installationId()) => [
  builtProgram("daemon"),
  ...installationArgs(home, id)
]

describe("blctxd run directly", () => {
  let home: DaemonHome | undefined
  afterEach(() => {
    home?.dispose()
    home = undefined
  })

  const installed = async () => {
    const h = makeDaemonHome("detached")
    home = h
    const install = await h.blctx(["install", "codex", "--step", "data_directory", "--json"])
    expect(install.code).toBe(0)
    return h
  }

  it("serves on a 0600 socket and, on SIGTERM, stops cleanly, removing its socket and pidfile", async () => {
    const h = await installed()
    const daemon = spawn(process.execPath, daemonArgs(h), { env: h.env, stdio: ["ignore", "ignore", "pipe"] })
    let stderr = ""
    daemon.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d
    })
    const exited = new Promise<number | null>((resolve) => daemon.once("exit", (code) => resolve(code)))
    await waitFor("the daemon to be ready", () => (stderr.includes('"blctxd ready"') ? true : undefined))
    expect(lstatSync(h.socketPath).mode & 0o777).toBe(0o600)
    expect(lstatSync(NodePath.join(h.stateDir, "blctxd.pid")).isFile()).toBe(true)
    // Structured lines on stderr: each one is a JSON object with a message and a level.
    const ready = stderr.split("\n").find((l) => l.includes('"blctxd ready"')) ?? ""
    expect(JSON.parse(ready)).toMatchObject({ logLevel: "INFO", annotations: { socket: h.socketPath } })

    daemon.kill("SIGTERM")
    expect(await exited).toBe(0)
    expect(() => lstatSync(h.socketPath)).toThrow()
    expect(() => lstatSync(NodePath.join(h.stateDir, "blctxd.pid"))).toThrow()
  })

  it("stops by itself once its installation is gone (an orphan never runs on unseen)", async () => {
    const h = await installed()
    const daemon = spawn(process.execPath, daemonArgs(h), { env: h.env, stdio: ["ignore", "ignore", "pipe"] })
    let stderr = ""
    daemon.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d
    })
    const exited = new Promise<number | null>((resolve) => daemon.once("exit", (code) => resolve(code)))
    await waitFor("the daemon to be ready", () => (stderr.includes('"blctxd ready"') ? true : undefined))
    rmSync(NodePath.join(h.stateDir, "installation.json"))
    expect(await exited).toBe(0)
    expect(stderr).toContain("blctxd stopping by itself")
    expect(stderr).toContain("was removed")
    expect(() => lstatSync(h.socketPath)).toThrow()
  })

  it("refuses a symbolic link or a regular file at the socket path, leaving it untouched", async () => {
    const h = await installed()
    const target = NodePath.join(h.home, "elsewhere")
    writeFileSync(target, "keep me")
    symlinkSync(target, h.socketPath)
    const link = await runProcess(process.execPath, daemonArgs(h), { env: h.env })
    expect(link.code).toBe(1)
    expect(link.stderr).toContain("symbolic link")
    expect(lstatSync(h.socketPath).isSymbolicLink()).toBe(true)

    rmSync(h.socketPath)
    writeFileSync(h.socketPath, "not a socket")
    const file = await runProcess(process.execPath, daemonArgs(h), { env: h.env })
    expect(file.code).toBe(1)
    expect(file.stderr).toContain("not a socket")
    expect(lstatSync(h.socketPath).isFile()).toBe(true)
  })

  it("refuses to serve another installation id, an uninstalled installation, or bad arguments", async () => {
    const h = await installed()
    const other = await runProcess(process.execPath, daemonArgs(h, "0b0e6d8c-1d55-4f34-9a55-5c8f1b1c6a01"), {
      env: h.env
    })
    expect(other.code).toBe(1)
    expect(other.stderr).toContain("the manifest names installation")

    const bad = await runProcess(process.execPath, [...daemonArgs(h), "--extra", "x"], { env: h.env })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("unknown argument")

    await h.blctx(["uninstall", "codex", "--json"])
    const inactive = await runProcess(process.execPath, daemonArgs(h), { env: h.env })
    expect(inactive.code).toBe(1)
    expect(inactive.stderr).toContain("inactive")
  })
})
