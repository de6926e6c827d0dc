import { Data, DateTime, Effect, Option, ParseResult, Schema } from "effect"
import { checkOwnership } from "../fs/ownership.js"
import { swapDescription } from "../fs/path-swapped.js"
import { readVerified } from "../fs/read-verified.js"
import { removeVerified } from "../fs/remove-verified.js"
import { SafeFs } from "../fs/safe-fs.js"
import { writeReplacing } from "../fs/write-replacing.js"
import { Paths } from "../paths/paths.js"
import { MANIFEST_VERSION, Manifest, ManifestVersionProbe } from "./manifest.js"

/** The manifest exists but cannot be trusted; blctx never overwrites it. */
export class ManifestUnreadable extends Data.TaggedError("ManifestUnreadable")<{
  readonly path: string
  readonly reason: string
}> {}

export class ManifestUnsupported extends Data.TaggedError("ManifestUnsupported")<{
  readonly path: string
  readonly version: unknown
}> {}

export type ManifestError = ManifestUnreadable | ManifestUnsupported

const decodeJson = Schema.decodeUnknownEither(Schema.parseJson(ManifestVersionProbe))
const decodeManifest = Schema.decodeUnknownEither(Manifest)
const encodeManifest = Schema.encodeSync(Manifest)

/** Reads and writes `installation.json` in the state directory, atomically and privately. */
export class ManifestStore extends Effect.Service<ManifestStore>()("blctx/ManifestStore", {
  effect: Effect.gen(function* () {
    const fs = yield* SafeFs
    const paths = yield* Paths
    const path = paths.manifest

    const read = Effect.fn("ManifestStore.read")(function* () {
      const entry = yield* fs
        .lstat(path)
        .pipe(Effect.mapError((e) => new ManifestUnreadable({ path, reason: e.message })))
      if (Option.isNone(entry)) return Option.none<Manifest>()
      if (entry.value.kind !== "file") {
        return yield* new ManifestUnreadable({ path, reason: `it is a ${entry.value.kind}, not a regular file` })
      }
      // A manifest another user wrote, or could swap, would steer what blctx removes and runs.
      yield* checkOwnership(path).pipe(
        Effect.provideService(SafeFs, fs),
        Effect.mapError(
          (e) => new ManifestUnreadable({ path, reason: e._tag === "OwnershipProblem" ? e.detail : e.message })
        )
      )
      // Read through a descriptor of the file checked above, never by its path again.
      const text = yield* readVerified(path, entry.value).pipe(
        Effect.provideService(SafeFs, fs),
        Effect.mapError(
          (e) =>
            new ManifestUnreadable({
              path,
              reason: e._tag === "PathSwapped" ? `it ${swapDescription(e.swap)}` : e.message
            })
        )
      )
      const probe = decodeJson(text)
      if (probe._tag === "Left") {
        return yield* new ManifestUnreadable({ path, reason: "it is not valid JSON" })
      }
      if (probe.right.version !== MANIFEST_VERSION) {
        return yield* new ManifestUnsupported({ path, version: probe.right.version })
      }
      const manifest = decodeManifest(JSON.parse(text))
      if (manifest._tag === "Left") {
        return yield* new ManifestUnreadable({
          path,
          reason: ParseResult.TreeFormatter.formatErrorSync(manifest.left).replaceAll("\n", " ")
        })
      }
      return Option.some(manifest.right)
    })

    const write = Effect.fn("ManifestStore.write")(function* (manifest: Manifest) {
      const checked = yield* fs.lstat(path)
      yield* writeReplacing(path, `${JSON.stringify(encodeManifest(manifest), null, 2)}\n`, 0o600, checked).pipe(
        Effect.provideService(SafeFs, fs)
      )
    })

    /**
     * Adds files (and directories) to what the active manifest owns, so `uninstall --purge`
     * removes them. Does nothing when they are already recorded.
     */
    const recordOwned = Effect.fn("ManifestStore.recordOwned")(function* (
      files: ReadonlyArray<string>,
      directories: ReadonlyArray<string> = []
    ) {
      const current = yield* read()
      if (Option.isNone(current)) return yield* new ManifestUnreadable({ path, reason: "there is no manifest" })
      const m = current.value
      const ownedFiles = [...new Set([...m.owned_files, ...files])]
      const created = [...new Set([...m.created_directories, ...directories])]
      if (ownedFiles.length === m.owned_files.length && created.length === m.created_directories.length) return
      const updated_at = DateTime.formatIso(yield* DateTime.now)
      yield* write(new Manifest({ ...m, owned_files: ownedFiles, created_directories: created, updated_at })).pipe(
        Effect.mapError((e) => new ManifestUnreadable({ path, reason: e.message }))
      )
    })

    const remove = Effect.fn("ManifestStore.remove")(function* () {
      const checked = yield* fs.lstat(path)
      if (Option.isNone(checked)) return
      yield* removeVerified(path, checked.value).pipe(Effect.provideService(SafeFs, fs))
    })

    return { path, read, write, recordOwned, remove } as const
  })
}) {}
