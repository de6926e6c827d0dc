import { Effect, Option } from "effect"
import { spoolEntryKind } from "../capture/capture-drain.js"
import { spoolDirIn } from "../capture/capture-paths.js"
import { SafeFs } from "../fs/safe-fs.js"
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
  return {
    spoolDir,
    /** The generations of every codex_hooks registration in the manifest (none: hooks not installed). */
    generations: manifests.read().pipe(
      Effect.map((m) =>
        Option.match(m, {
          onNone: () => [] as ReadonlyArray<string>,
          onSome: (m) => (m.codex_hooks ?? []).map((h) => h.generation)
        })
      )
    ),
    /** Records in the spool not drained yet (temp files are not records); a missing spool holds none. */
    spoolRecords: fs.readDirectory(spoolDir).pipe(
      Effect.map((names) => names.filter((n) => spoolEntryKind(n) === "record").length),
      Effect.orElseSucceed(() => 0)
    )
  }
})
