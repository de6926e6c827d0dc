#!/usr/bin/env node
/**
 * Tests only: blctxd with holds composed into its job kinds, so acceptance tests can keep a job
 * running while it holds the writer, and kill it mid-step. The holds are read, at each step, from
 * `<state home>/blctx/test-holds.json` (`{"maintenance_step_ms": 1500, "repair_batch_ms": 60000}`); without the file
 * nothing is held and this is the product's daemon. The name ends in `daemon.js` as the product's
 * does, since supervisors and tests recognise the daemon by it.
 *
 * Built by scripts/bundle.mjs into dist/test-programs/, which the published package leaves out.
 */
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { Duration, Effect } from "effect"
import { runDaemonProgram } from "../../programs/daemon-main.js"
import type { DaemonArgs } from "../../src/daemon/daemon-args.js"
import { registerJobKind } from "../../src/jobs/job-kind.js"
import { makeMaintenanceKind } from "../../src/jobs/maintenance-kind.js"

type Hold = "maintenance_step_ms" | "repair_batch_ms"

/** Sleeps as long as the test's holds file says for `hold`, read afresh each time. */
const holdFor = (args: DaemonArgs, hold: Hold) =>
  Effect.suspend(() => {
    const file = NodePath.join(args["state-home"], "blctx", "test-holds.json")
    let ms = 0
    try {
      const holds = JSON.parse(Fs.readFileSync(file, "utf8")) as Partial<Record<Hold, number>>
      ms = holds[hold] ?? 0
    } catch {
      // No holds file: nothing is held.
    }
    return ms > 0 ? Effect.sleep(Duration.millis(ms)) : Effect.void
  })

runDaemonProgram({
  kinds: (args) => [registerJobKind(makeMaintenanceKind({ holdEachStep: holdFor(args, "maintenance_step_ms") }))],
  indexing: (args) => ({ repair: { holdEachBatch: holdFor(args, "repair_batch_ms") } })
})
