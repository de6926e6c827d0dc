import * as NodePath from "node:path"
import { Effect, Either, Option } from "effect"
import { swapDescription } from "../fs/path-swapped.js"
import { readVerified } from "../fs/read-verified.js"
import { SafeFs } from "../fs/safe-fs.js"
import { Paths } from "../paths/paths.js"
import { type BlctxConfig, ConfigError, DEFAULT_CONFIG, parseConfig } from "./config.js"

export const CONFIG_FILE_NAME = "config.json"
/** A real configuration is a few hundred bytes; anything this large is refused before reading. */
export const CONFIG_MAX_BYTES = 1024 * 1024

/** Reads `<XDG_CONFIG_HOME>/blctx/config.json` on every `load` (a missing file means the defaults). */
export class ConfigFile extends Effect.Service<ConfigFile>()("blctx/ConfigFile", {
  effect: Effect.gen(function* () {
    const fs = yield* SafeFs
    const paths = yield* Paths
    const path = NodePath.join(paths.configDir, CONFIG_FILE_NAME)

    const load = Effect.fn("ConfigFile.load")(function* () {
      const entry = yield* fs
        .lstat(path)
        .pipe(Effect.mapError((e) => new ConfigError({ path, field: "", message: `cannot read it: ${e.code}` })))
      if (Option.isNone(entry)) return { ...DEFAULT_CONFIG, source: "defaults" } satisfies BlctxConfig
      if (entry.value.kind !== "file") {
        return yield* new ConfigError({ path, field: "", message: `it is a ${entry.value.kind}, not a regular file` })
      }
      if (entry.value.size > CONFIG_MAX_BYTES) {
        return yield* new ConfigError({
          path,
          field: "",
          message: `it is ${entry.value.size} bytes; a configuration file may be at most ${CONFIG_MAX_BYTES} bytes (1 MiB)`
        })
      }
      // Only this user's file, in a folder no one else can swap it in, may steer blctx.
      if (entry.value.uid !== fs.userId) {
        return yield* new ConfigError({
          path,
          field: "",
          message: `it belongs to user ${entry.value.uid}, not to you (user ${fs.userId}); blctx reads only your own configuration`
        })
      }
      if ((entry.value.mode & 0o022) !== 0) {
        return yield* new ConfigError({
          path,
          field: "",
          message: `other users can write to it (mode ${entry.value.mode.toString(8).padStart(4, "0")}); run: chmod go-w ${path}`
        })
      }
      // Read through a descriptor of the file checked above, never by its path again.
      const text = yield* readVerified(path, entry.value).pipe(
        Effect.provideService(SafeFs, fs),
        Effect.mapError(
          (e) =>
            new ConfigError({
              path,
              field: "",
              message:
                e._tag === "PathSwapped"
                  ? `it ${swapDescription(e.swap)}; it was not read`
                  : `cannot read it: ${e.code}`
            })
        )
      )
      return yield* Either.match(parseConfig(text, path), { onLeft: Effect.fail, onRight: Effect.succeed })
    })

    return { path, load } as const
  })
}) {}
