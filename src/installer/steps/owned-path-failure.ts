import * as NodePath from "node:path"
import type { PathSwapped } from "../../fs/path-swapped.js"
import type { FsError } from "../../fs/safe-fs.js"
import { fail, type StepFailure } from "../step.js"

/** A failed operation on one of blctx's own paths, or a path swapped between its check and use. */
export const ownedPathFailure = (e: FsError | PathSwapped): StepFailure =>
  e._tag === "PathSwapped"
    ? fail(e.message, `Find out who changed ${e.path} (blctx's folders must be only yours), then rerun.`)
    : fail(`${e.op} ${e.path} failed: ${e.code}`, `Check that ${NodePath.dirname(e.path)} exists and belongs to you.`)
