import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { NodeSafeFsLive } from "../../layers/node-safe-fs.js"
import { outsideFile, swappingSafeFs, symlinkSwap } from "../fs/swapping-safe-fs.test-support.js"
import { Paths, resolvePaths } from "../paths/paths.js"
import { CONFIG_MAX_BYTES, ConfigFile } from "./config-file.js"

let home: string
beforeEach(() => {
  home = Fs.realpathSync(Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-config-")))
})
afterEach(() => Fs.rmSync(home, { recursive: true, force: true }))

const layer = () => ConfigFile.Default.pipe(Layer.provide(Paths.layerFrom({ home })), Layer.provide(NodeSafeFsLive))
const configPath = () => NodePath.join(resolvePaths({ home }).configDir, "config.json")
const writeConfig = (content: string | Buffer, mode = 0o644) => {
  Fs.mkdirSync(NodePath.dirname(configPath()), { recursive: true })
  Fs.writeFileSync(configPath(), content)
  Fs.chmodSync(configPath(), mode)
}
const loadError = () => Effect.flatMap(ConfigFile, (c) => Effect.flip(c.load())).pipe(Effect.provide(layer()))

describe("ConfigFile", () => {
  it.effect("reads a small file of one's own, even one others may read", () =>
    Effect.gen(function* () {
      writeConfig('{"model":{"endpoint":"https://mirror.example.com"}}')
      const config = yield* Effect.flatMap(ConfigFile, (c) => c.load()).pipe(Effect.provide(layer()))
      expect(config.model.endpoint).toBe("https://mirror.example.com")
    })
  )

  it.effect("accepts the hook's prompt_recall section", () =>
    Effect.gen(function* () {
      writeConfig('{"prompt_recall":{"enabled":false,"deadline_ms":200,"limit":2,"min_relevance":0.6}}')
      const config = yield* Effect.flatMap(ConfigFile, (c) => c.load()).pipe(Effect.provide(layer()))
      expect(config.source).toBe(configPath())
    })
  )

  it.effect("refuses a file over 1 MiB before reading it, naming its size", () =>
    Effect.gen(function* () {
      writeConfig(Buffer.alloc(CONFIG_MAX_BYTES + 1, 0x20))
      const error = yield* loadError()
      expect(error.message).toContain(`${CONFIG_MAX_BYTES + 1} bytes`)
      expect(error.message).toContain("at most")
    })
  )

  it.effect("refuses a file other users can write to", () =>
    Effect.gen(function* () {
      writeConfig("{}", 0o666)
      const error = yield* loadError()
      expect(error.message).toContain("other users can write to it")
      expect(error.message).toContain("chmod go-w")
    })
  )

  it.effect.skipIf(process.getuid?.() !== 0)("(as root) refuses a file another user owns", () =>
    Effect.gen(function* () {
      writeConfig("{}")
      Fs.chownSync(configPath(), 54_321, 54_321)
      const error = yield* loadError()
      expect(error.message).toContain("belongs to user 54321")
    })
  )

  it.effect("refuses a file replaced by a symbolic link between its checks and the read", () =>
    Effect.gen(function* () {
      writeConfig('{"model":{"endpoint":"https://mirror.example.com"}}')
      const path = configPath()
      const outside = outsideFile(NodePath.join(home, "outside.json"), '{"model":{"endpoint":"https://evil.example"}}')
      const error = yield* Effect.flatMap(ConfigFile, (c) => Effect.flip(c.load())).pipe(
        Effect.provide(
          ConfigFile.Default.pipe(
            Layer.provide(Paths.layerFrom({ home })),
            Layer.provide(swappingSafeFs({ path, swap: symlinkSwap(path, outside.path) }))
          )
        )
      )
      expect(error).toMatchObject({
        _tag: "ConfigError",
        message: "it was replaced by a symbolic link between check and use; it was not read"
      })
      expect(outside.untouched()).toBe(true)
    })
  )
})
