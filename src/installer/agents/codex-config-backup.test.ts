import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { NodeSafeFsLive } from "../../../layers/node-safe-fs.js"
import { FsError, SafeFs } from "../../fs/safe-fs.js"
import { backupsOf, describeRewrite, preservingCodexConfig } from "./codex-config-backup.js"

let dir: string
beforeEach(() => {
  dir = Fs.realpathSync(Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-config-backup-")))
})
afterEach(() => {
  Fs.rmSync(dir, { recursive: true, force: true })
})

const ORIGINAL = '# mine\nmodel = "o3" # kept?\n'
/** What `codex mcp add` does to the file: its own serialisation, mode 0600. */
const codexRewrite = (config: string) =>
  Effect.sync(() => {
    Fs.rmSync(config)
    Fs.writeFileSync(config, 'model = "o3"\n\n[mcp_servers.x]\ncommand = "/bin/true"\n', { mode: 0o600 })
    return "added"
  })

const withFs = <A, E>(f: (fs: SafeFs["Type"]) => Effect.Effect<A, E>) =>
  Effect.flatMap(SafeFs, f).pipe(Effect.provide(NodeSafeFsLive))

describe("preservingCodexConfig", () => {
  it.effect("backs up the exact bytes with their mode, says so first, and puts the mode back after Codex", () =>
    withFs((fs) =>
      Effect.gen(function* () {
        const config = NodePath.join(dir, "config.toml")
        Fs.writeFileSync(config, ORIGINAL)
        Fs.chmodSync(config, 0o644)
        const said: Array<string> = []
        const [result, rewrite] = yield* preservingCodexConfig(fs, config, (p) =>
          Effect.sync(() => void said.push(p.label))
        )(codexRewrite(config))
        expect(result).toBe("added")
        const backup = Option.getOrThrow(rewrite.backup)
        expect(Fs.readFileSync(backup, "utf8")).toBe(ORIGINAL)
        expect(Fs.statSync(backup).mode & 0o777).toBe(0o644)
        expect(Fs.statSync(config).mode & 0o777).toBe(0o644)
        expect(Fs.readFileSync(config, "utf8")).toContain("[mcp_servers.x]")
        expect(said).toEqual([expect.stringContaining(backup)])
        expect(describeRewrite(rewrite)).toContain(`the original is kept at ${backup} and its mode 0644 was put back`)
        expect(yield* backupsOf(fs, config)).toEqual([backup])
      })
    )
  )

  it.effect("a missing config.toml needs no backup; Codex creates it", () =>
    withFs((fs) =>
      Effect.gen(function* () {
        const config = NodePath.join(dir, "config.toml")
        const [, rewrite] = yield* preservingCodexConfig(
          fs,
          config,
          () => Effect.void
        )(Effect.sync(() => Fs.writeFileSync(config, "x = 1\n", { mode: 0o600 })))
        expect(rewrite).toEqual({ backup: Option.none(), modeRestored: Option.none() })
        expect(describeRewrite(rewrite)).toBe("")
      })
    )
  )

  it.effect("a backup that cannot be written stops the rewrite: the file is as it was", () =>
    withFs((live) =>
      Effect.gen(function* () {
        const config = NodePath.join(dir, "config.toml")
        Fs.writeFileSync(config, ORIGINAL, { mode: 0o644 })
        // A full disk: no write succeeds.
        const fs: SafeFs["Type"] = {
          ...live,
          writeAtomic: (path) =>
            Effect.fail(new FsError({ op: "write", path, code: "ENOSPC", message: "no space left on device" }))
        }
        let ran = false
        const failure = yield* Effect.flip(
          preservingCodexConfig(
            fs,
            config,
            () => Effect.void
          )(
            Effect.sync(() => {
              ran = true
            })
          )
        )
        expect(ran).toBe(false)
        expect(failure.detail).toMatch(/could not back up .* nothing was changed/)
        expect(Fs.readFileSync(config, "utf8")).toBe(ORIGINAL)
      })
    )
  )
})
