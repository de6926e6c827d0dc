#!/usr/bin/env node
/**
 * Tests only: blctxd with holds composed into its job kinds, so acceptance tests can keep a job
 * running while it holds the writer, or inside a file, and kill it mid-step. The holds are read,
 * at each step, from `<state home>/blctx/test-holds.json` (`{"maintenance_step_ms": 1500,
 * "repair_batch_ms": 60000, "import_file_ms": 600000}`); without the file nothing is held and this
 * is the product's daemon. When a hold begins, `<state home>/blctx/test-held-<hold>` is written
 * with what is held (the file, for an import), so a test waits on that event rather than a delay.
 * A test may give the viewer's page of its own in `<state home>/blctx/test-ui/` (read at start).
 * The name ends in `daemon.js` as the product's does, since supervisors and tests recognise the
 * daemon by it.
 *
 * Built by scripts/bundle.mjs into dist/test-programs/, which the published package leaves out.
 */
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { Duration, Effect } from "effect"
import { runDaemonProgram } from "../../programs/daemon-main.js"
import { PACKAGE_UI_FOLDER } from "../../programs/package-files.js"
import { registerJobKind } from "../../src/jobs/job-kind.js"
import { makeMaintenanceKind } from "../../src/jobs/maintenance-kind.js"
import type { DaemonArgs } from "../../src/service/daemon-args.js"

type Hold = "maintenance_step_ms" | "repair_batch_ms" | "import_file_ms"

/** Tells the test a hold began: written whole (a rename), so a reader never sees half of it. */
const markHeld = (dir: string, hold: Hold, what: string) => {
  const marker = NodePath.join(dir, `test-held-${hold}`)
  Fs.writeFileSync(`${marker}.tmp`, what, { mode: 0o600 })
  Fs.renameSync(`${marker}.tmp`, marker)
}

/** Sleeps as long as the test's holds file says for `hold`, read afresh each time. */
const holdFor = (args: DaemonArgs, hold: Hold, what = "") =>
  Effect.suspend(() => {
    const dir = NodePath.join(args["state-home"], "blctx")
    let ms = 0
    try {
      const holds = JSON.parse(Fs.readFileSync(NodePath.join(dir, "test-holds.json"), "utf8")) as Partial<
        Record<Hold, number>
      >
      ms = holds[hold] ?? 0
    } catch {
      // No holds file: nothing is held.
    }
    if (ms <= 0) return Effect.void
    markHeld(dir, hold, what)
    return Effect.sleep(Duration.millis(ms))
  })

/** The viewer's page from `<state home>/blctx/test-ui/` when a test wrote one there, else the package's. */
const uiFolder = (args: DaemonArgs) => {
  const folder = NodePath.join(args["state-home"], "blctx", "test-ui")
  return Fs.existsSync(folder) ? folder : PACKAGE_UI_FOLDER
}

runDaemonProgram({
  uiFolder,
  kinds: (args) => [registerJobKind(makeMaintenanceKind({ holdEachStep: holdFor(args, "maintenance_step_ms") }))],
  indexing: (args) => ({
    import: { holdEachFile: (path) => holdFor(args, "import_file_ms", path) },
    repair: { holdEachBatch: holdFor(args, "repair_batch_ms") }
  })
})
