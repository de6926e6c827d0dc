import { Deferred, Effect } from "effect"
import { TranscriptFiles } from "../transcripts/transcript-files.js"

/**
 * Test support: the live `TranscriptFiles` (from the context), except that `change` runs once,
 * synchronously, just before the read after the first `afterReads` reads of `target` (`readInto`,
 * the reads of the importer's streaming pass and of its hash). The records of those reads have
 * been handed to the classifier by then, so the file changes under an import that is half done:
 * deterministically, with no timing involved. `changed` completes when it has run.
 */
export const changeWhileRead = (target: string, change: () => void, afterReads = 1) =>
  Effect.gen(function* () {
    const live = yield* TranscriptFiles
    const changed = yield* Deferred.make<void>()
    let reads = 0
    const files = TranscriptFiles.of({
      open: (path) =>
        path !== target
          ? live.open(path)
          : Effect.map(live.open(path), (handle) => ({
              ...handle,
              readInto: (position: number, buffer: Uint8Array) =>
                Effect.suspend(() => {
                  if (reads++ === afterReads) {
                    change()
                    Deferred.unsafeDone(changed, Effect.void)
                  }
                  return handle.readInto(position, buffer)
                })
            }))
    })
    return { files, changed }
  })
