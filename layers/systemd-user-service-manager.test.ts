import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import type { InstallationId } from "../src/domain/installation-id.js"
import { ServiceManager } from "../src/service/service-manager.js"
import type { ServiceSpec } from "../src/service/service-spec.js"
import { renderUnit } from "../src/service/systemd-unit.js"
import { makeSystemdUserServiceManager, unitPathOf } from "./systemd-user-service-manager.js"

/**
 * A `systemctl` stand-in: records its arguments, answers `show`, and fails the way systemctl does
 * when the files `no-manager` or `fail-start` exist beside it.
 */
const fakeSystemctl = (dir: string) => {
  const path = NodePath.join(dir, "systemctl")
  writeFileSync(
    path,
    `#!/bin/sh
echo "$*" >> "${dir}/calls"
case "$2" in
  show-environment)
    if [ -f "${dir}/no-manager" ]; then echo "Failed to connect to bus: No medium found" >&2; exit 1; fi
    echo "HOME=/home/x" ;;
  show) printf 'UnitFileState=linked\\nActiveState=active\\nMainPID=%s\\n' "$$" ;;
  start|restart)
    if [ -f "${dir}/fail-start" ]; then
      echo "Job for $3 failed because the control process exited with error code." >&2
      echo "See \\"systemctl --user status $3\\" for details." >&2
      exit 1
    fi ;;
esac
exit 0
`
  )
  chmodSync(path, 0o700)
  return path
}

const setup = Effect.acquireRelease(
  Effect.sync(() => {
    const dir = mkdtempSync(NodePath.join(tmpdir(), "blctx-systemctl-"))
    const configDir = NodePath.join(dir, "config")
    const stateDir = NodePath.join(dir, "state")
    mkdirSync(configDir)
    mkdirSync(stateDir)
    const installationId = "00000000-0000-4000-8000-000000000001" as InstallationId
    const spec: ServiceSpec = {
      installationId,
      name: `blctxd-${installationId}`,
      command: ["/usr/bin/node", "/opt/blctx/dist/programs/daemon.js", "--installation-id", installationId],
      environment: { MALLOC_ARENA_MAX: "2" },
      daemonEntry: "/opt/blctx/dist/programs/daemon.js",
      socketPath: NodePath.join(stateDir, "blctxd.sock"),
      stateDir,
      configDir,
      pidFile: NodePath.join(stateDir, "blctxd.pid"),
      logFile: NodePath.join(stateDir, "blctxd.log")
    }
    const calls = () =>
      existsSync(NodePath.join(dir, "calls"))
        ? readFileSync(NodePath.join(dir, "calls"), "utf8").trim().split("\n")
        : []
    return { dir, spec, systemctl: fakeSystemctl(dir), calls }
  }),
  ({ dir }) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const managerOf = (systemctl: string) =>
  Effect.provide(ServiceManager, makeSystemdUserServiceManager(systemctl).pipe(Layer.provide(NodeContext.layer)))

describe("systemd user service manager (systemctl through Command)", () => {
  it.scoped(
    "installs: writes the unit, links, reloads, enables, then restarts a changed unit or starts an unchanged one",
    () =>
      Effect.gen(function* () {
        const { spec, systemctl, calls } = yield* setup
        const manager = yield* managerOf(systemctl)
        yield* manager.install(spec)
        expect(readFileSync(unitPathOf(spec), "utf8")).toBe(renderUnit(spec))
        const unit = `${spec.name}.service`
        expect(calls()).toEqual([
          "--user show-environment",
          `--user link ${unitPathOf(spec)}`,
          "--user daemon-reload",
          `--user enable ${unit}`,
          `--user restart ${unit}`
        ])
        yield* manager.install(spec)
        expect(calls().at(-1)).toBe(`--user start ${unit}`)

        const status = yield* manager.status(spec)
        expect(status.enabled).toBe(true)
        expect(status.active).toBe(true)
        expect(Option.isSome(status.mainPid)).toBe(true)
        expect(status.unitContent).toEqual(Option.some(renderUnit(spec)))
      })
  )

  it.scoped("puts systemctl's first stderr line in the failure, with a remediation", () =>
    Effect.gen(function* () {
      const { dir, spec, systemctl } = yield* setup
      const manager = yield* managerOf(systemctl)
      writeFileSync(NodePath.join(dir, "fail-start"), "")
      const failed = yield* Effect.flip(manager.install(spec))
      expect(failed.detail).toBe(
        `systemctl --user restart ${spec.name}.service failed: Job for ${spec.name}.service failed because the control process exited with error code.`
      )
      expect(failed.remediation).toContain(`journalctl --user -u ${spec.name}.service`)
    })
  )

  it.scoped("reports an unreachable user manager, and a missing systemctl, as unavailable", () =>
    Effect.gen(function* () {
      const { dir, spec, systemctl, calls } = yield* setup
      writeFileSync(NodePath.join(dir, "no-manager"), "")
      const unreachable = yield* Effect.flip((yield* managerOf(systemctl)).ensureRunning(spec))
      expect(unreachable.detail).toBe(
        "the systemd user manager is unavailable: Failed to connect to bus: No medium found"
      )
      expect(unreachable.remediation).toContain("BLCTX_SERVICE_MANAGER=detached")
      expect(calls()).toEqual(["--user show-environment"])

      const missing = yield* Effect.flip((yield* managerOf(NodePath.join(dir, "absent"))).status(spec))
      expect(missing.detail).toMatch(/^the systemd user manager is unavailable: .*ENOENT/)
    })
  )

  it.scoped("uninstalls, with or without a manager, leaving no unit file", () =>
    Effect.gen(function* () {
      const { dir, spec, systemctl, calls } = yield* setup
      const manager = yield* managerOf(systemctl)
      yield* manager.install(spec)
      yield* manager.uninstall(spec)
      expect(existsSync(unitPathOf(spec))).toBe(false)
      expect(calls().slice(-3)).toEqual([
        "--user show-environment",
        `--user disable --now ${spec.name}.service`,
        "--user daemon-reload"
      ])
      writeFileSync(NodePath.join(dir, "no-manager"), "")
      yield* manager.install(spec).pipe(Effect.ignore)
      yield* manager.uninstall(spec)
      expect(calls().at(-1)).toBe("--user show-environment")
    })
  )
})
