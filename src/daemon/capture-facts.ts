import { Effect, Option } from "effect"
import { spoolEntryKind } from "../capture/capture-drain.js"
import { spoolDirIn } from "../capture/capture-paths.js"
import { CAPTURE_AGENTS, type CaptureAgent } from "../capture/capture-record.js"
import { SafeFs } from "../fs/safe-fs.js"
import { recordsKey } from "../ownership/manifest-keys.js"
import { ManifestStore } from "../ownership/manifest-store.js"
import { Paths } from "../paths/paths.js"

/**
 * What the daemon knows about capture outside its database: the spool folder, the hook
 * generations the manifest registers now, and how many captured events wait in the spool.
 */
export const makeCaptureFacts = Effect.gen(function* () {
  const fs = yield* SafeFs
  const paths = yield* Paths
  const manifests = yield* ManifestStore
  const spoolDir = spoolDirIn(paths.dataDir)
  const hookGenerations = manifests.read().pipe(
    Effect.map((m) =>
      Option.match(m, {
        onNone: () => [] as ReadonlyArray<{ readonly generation: string; readonly agent: CaptureAgent }>,
        onSome: (m) =>
          CAPTURE_AGENTS.flatMap((agent) =>
            (m[recordsKey(agent, "hooks")] ?? []).map((h) => ({ generation: h.generation, agent }))
          )
      })
    )
  )
  return {
    spoolDir,
    /**
     * The generation of every hook registration in the manifest (each agent's `<agent>_hooks`, in AGENT_NAMES order),
     * with the agent it is for (none: no hooks installed).
     */
    hookGenerations,
    /** The generations alone (what capture status counts). */
    generations: Effect.map(hookGenerations, (all) => all.map((h) => h.generation)),
    /** Records in the spool not drained yet (temp files are not records); a missing spool holds none. */
    spoolRecords: fs.readDirectory(spoolDir).pipe(
      Effect.map((names) => names.filter((n) => spoolEntryKind(n) === "record").length),
      Effect.orElseSucceed(() => 0)
    )
  }
})
