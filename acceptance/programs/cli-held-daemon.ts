#!/usr/bin/env node
/**
 * Tests only: the product's `blctx` whose supervisor runs the held daemon
 * (acceptance/programs/held-daemon.ts) instead of the product's: under the fake systemd when
 * BLCTX_FAKE_SYSTEMD_DIR is set, else under the detached supervisor.
 *
 * Built by scripts/bundle.mjs into dist/test-programs/, which the published package leaves out.
 */
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { DetachedSupervisorLive } from "../../layers/detached-supervisor.js"
import { runCli } from "../../programs/cli-main.js"
import { FakeSystemdServiceManager } from "../../testing/fake-systemd-service-manager.js"

const managerDir = process.env.BLCTX_FAKE_SYSTEMD_DIR
const daemon = NodePath.join(NodePath.dirname(fileURLToPath(import.meta.url)), "held-daemon.js")

runCli({
  entryUrl: import.meta.url,
  serviceManager:
    managerDir !== undefined && NodePath.isAbsolute(managerDir)
      ? FakeSystemdServiceManager(managerDir)
      : DetachedSupervisorLive,
  daemon
})
