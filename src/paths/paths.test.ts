import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { Paths, resolvePaths } from "./paths.js"
import { resolvePathsFromEnv } from "./resolve-paths.js"

describe("resolvePaths", () => {
  it("defaults every XDG home under HOME and CODEX_HOME to ~/.codex", () => {
    const p = resolvePaths({ home: "/home/ada" })
    expect(p.dataDir).toBe("/home/ada/.local/share/blctx")
    expect(p.configDir).toBe("/home/ada/.config/blctx")
    expect(p.cacheDir).toBe("/home/ada/.cache/blctx")
    expect(p.stateDir).toBe("/home/ada/.local/state/blctx")
    expect(p.codexHome).toBe("/home/ada/.codex")
    expect(p.database).toBe("/home/ada/.local/share/blctx/context.db")
    expect(p.manifest).toBe("/home/ada/.local/state/blctx/installation.json")
  })

  it("respects absolute overrides", () => {
    const p = resolvePaths({
      home: "/home/ada",
      XDG_DATA_HOME: "/srv/data",
      XDG_CONFIG_HOME: "/srv/config",
      XDG_CACHE_HOME: "/srv/cache",
      XDG_STATE_HOME: "/srv/state",
      CODEX_HOME: "/srv/codex"
    })
    expect([p.dataDir, p.configDir, p.cacheDir, p.stateDir, p.codexHome]).toEqual([
      "/srv/data/blctx",
      "/srv/config/blctx",
      "/srv/cache/blctx",
      "/srv/state/blctx",
      "/srv/codex"
    ])
  })

  it("ignores relative and empty overrides, as the XDG spec says", () => {
    const p = resolvePaths({
      home: "/home/ada",
      XDG_DATA_HOME: "relative/data",
      XDG_STATE_HOME: "",
      CODEX_HOME: "./codex"
    })
    expect(p.dataDir).toBe("/home/ada/.local/share/blctx")
    expect(p.stateDir).toBe("/home/ada/.local/state/blctx")
    expect(p.codexHome).toBe("/home/ada/.codex")
  })

  it("normalises absolute overrides", () => {
    expect(resolvePaths({ home: "/h", XDG_CACHE_HOME: "/srv//cache/./x/" }).cacheDir).toBe("/srv/cache/x/blctx")
  })
})

describe("Paths", () => {
  it.effect("reads every variable resolvePathsFromEnv reads: the same environment gives the same paths", () =>
    Effect.gen(function* () {
      const env = {
        HOME: "/home/ada",
        XDG_STATE_HOME: "/srv/state",
        CODEX_HOME: "/srv/codex",
        CLAUDE_CONFIG_DIR: "/srv/claude",
        GEMINI_CLI_HOME: "/srv/gemini-user"
      }
      const paths = yield* Paths.pipe(
        Effect.provide(Paths.Default),
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))
      )
      expect({ ...paths }).toEqual(resolvePathsFromEnv(env))
      expect(paths.geminiHome).toBe("/srv/gemini-user/.gemini")
    })
  )
})
