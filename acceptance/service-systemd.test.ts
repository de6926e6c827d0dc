import { lstatSync } from "node:fs"
import * as NodePath from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { checkOf, isAlive, processesMentioning, waitFor } from "./support/daemon-harness.js"
import { type IsolatedHome, makeIsolatedHome } from "./support/isolated-home.js"

/**
 * Opt-in: the real systemd user manager (BLCTX_SYSTEMD_TEST=1). Needs a logged-in session with
 * `systemctl --user` working (XDG_RUNTIME_DIR and DBUS_SESSION_BUS_ADDRESS set). It creates,
 * enables and finally removes one `blctxd-<uuid>.service` unit in that manager.
 */
describe("blctxd under the real systemd user manager", () => {
  let home: IsolatedHome | undefined
  afterEach(async () => {
    if (home === undefined) return
    await home.blctx(["uninstall", "codex", "--json"], { env: systemdEnv() })
    for (const pid of processesMentioning(home.home)) process.kill(pid, "SIGKILL")
    home.dispose()
    home = undefined
  })

  const systemdEnv = (): NodeJS.ProcessEnv => ({
    BLCTX_SERVICE_MANAGER: "systemd",
    XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR,
    DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS
  })

  it.runIf(process.env.BLCTX_SYSTEMD_TEST === "1")(
    "installs a notify unit, is restarted by systemd after kill -9, and uninstalls without leftovers",
    async () => {
      const h = makeIsolatedHome()
      home = h
      const env = systemdEnv()
      const install = await h.blctx(["install", "codex", "--step", "service_health", "--json"], { env })
      expect(install.code, install.stdout + install.stderr).toBe(0)
      expect(checkOf(install.stdout, "background_service").detail).toContain("systemd user manager")
      const daemons = () => processesMentioning(h.home).filter((pid) => isAlive(pid))
      const first = await waitFor("one daemon", () => (daemons().length === 1 ? daemons()[0] : undefined))
      if (first === undefined) throw new Error("no daemon")
      const socket = NodePath.join(h.xdg.state, "blctx", "blctxd.sock")
      expect(lstatSync(socket).mode & 0o777).toBe(0o600)

      process.kill(first, "SIGKILL")
      await waitFor(
        "systemd to restart the daemon and status to pass",
        async () => {
          const status = await h.blctx(["status", "--step", "service_health", "--json"], { env })
          const now = daemons()
          return status.code === 0 && now.length === 1 && now[0] !== first ? true : undefined
        },
        30_000
      )
      const status = await h.blctx(["status", "--step", "background_service", "--json"], { env })
      expect(checkOf(status.stdout, "background_service").status).toBe("passed")

      const uninstall = await h.blctx(["uninstall", "codex", "--json"], { env })
      expect(checkOf(uninstall.stdout, "background_service").status).toBe("passed")
      expect(daemons()).toEqual([])
      expect(() => lstatSync(socket)).toThrow()
    }
  )
})
