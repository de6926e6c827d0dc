import * as Fs from "node:fs"
import { Layer } from "effect"
import { DetachedSupervisorLive } from "./detached-supervisor.js"
import { FakeSystemdServiceManager } from "./fake-systemd-service-manager.js"
import { SystemdUserServiceManagerLive } from "./systemd-user-service-manager.js"

/**
 * Which service manager this machine has: systemd user units where systemd runs (sd_booted:
 * /run/systemd/system exists), else the detached supervisor. BLCTX_SERVICE_MANAGER overrides
 * (`systemd`, `detached`; `fake-systemd` with BLCTX_FAKE_SYSTEMD_DIR in tests).
 */
export const ServiceManagerLive = Layer.suspend(() => {
  switch (process.env.BLCTX_SERVICE_MANAGER) {
    case "systemd":
      return SystemdUserServiceManagerLive
    case "detached":
      return DetachedSupervisorLive
    case "fake-systemd": {
      const root = process.env.BLCTX_FAKE_SYSTEMD_DIR
      // Without a manager directory the fake reports itself unavailable, like a real one.
      return FakeSystemdServiceManager(root?.startsWith("/") ? root : "/nonexistent")
    }
    default:
      return Fs.existsSync("/run/systemd/system") ? SystemdUserServiceManagerLive : DetachedSupervisorLive
  }
})
