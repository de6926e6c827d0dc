import * as Fs from "node:fs"
import { Layer } from "effect"
import { DetachedSupervisorLive } from "./detached-supervisor.js"
import { LaunchdServiceManagerLive } from "./launchd-service-manager.js"
import { SystemdUserServiceManagerLive } from "./systemd-user-service-manager.js"

/**
 * Which service manager this machine has: launchd on macOS, systemd user units where systemd runs
 * (sd_booted: /run/systemd/system exists), else the detached supervisor. A person may override the
 * choice with BLCTX_SERVICE_MANAGER=systemd, =launchd or =detached; any other value is ignored. Tests that want the
 * fake systemd compose it into their own CLI entry (acceptance/programs/cli-fake-systemd.ts): no
 * environment variable reaches it from here.
 */
export const ServiceManagerLive = Layer.suspend(() => {
  switch (process.env.BLCTX_SERVICE_MANAGER) {
    case "systemd":
      return SystemdUserServiceManagerLive
    case "launchd":
      return LaunchdServiceManagerLive
    case "detached":
      return DetachedSupervisorLive
    default:
      if (process.platform === "darwin") return LaunchdServiceManagerLive
      return Fs.existsSync("/run/systemd/system") ? SystemdUserServiceManagerLive : DetachedSupervisorLive
  }
})
