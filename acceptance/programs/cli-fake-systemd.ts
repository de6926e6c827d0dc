#!/usr/bin/env node
/**
 * Tests only: the product's `blctx` with the fake systemd user manager composed in, so acceptance
 * tests run the real CLI and the real daemon under a (fake) systemd. The manager's directory comes
 * from BLCTX_FAKE_SYSTEMD_DIR, which only this test entry reads (the product's `programs/cli.ts`
 * cannot reach the fake at all); the arguments are blctx's own:
 *
 *   BLCTX_FAKE_SYSTEMD_DIR=/abs/dir node dist/test-programs/cli-fake-systemd.mjs install codex --json
 *
 * Built by scripts/bundle.mjs into dist/test-programs/, which the published package leaves out.
 */
import * as NodePath from "node:path"
import { runCli } from "../../programs/cli-main.js"
import { FakeSystemdServiceManager } from "../../testing/fake-systemd-service-manager.js"

const managerDir = process.env.BLCTX_FAKE_SYSTEMD_DIR
if (managerDir === undefined || !NodePath.isAbsolute(managerDir)) {
  process.stderr.write("cli-fake-systemd: set BLCTX_FAKE_SYSTEMD_DIR to the fake manager's absolute directory\n")
  process.exit(2)
}

runCli({ entryUrl: import.meta.url, serviceManager: FakeSystemdServiceManager(managerDir) })
