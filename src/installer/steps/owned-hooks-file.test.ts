import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Either, type Layer, Option } from "effect"
import { NodeSafeFsLive } from "../../../layers/node-safe-fs.js"
import { addEntries, type HookEntry } from "../../codex/hooks-file.js"
import { SafeFs } from "../../fs/safe-fs.js"
import { extraLinkSwap, outsideFile, swappingSafeFs, symlinkSwap } from "../../fs/swapping-safe-fs.test-support.js"
import type { StepFailure } from "../step.js"
import { makeOwnedHooksFile } from "./owned-hooks-file.js"

let dir: string
let path: string
beforeEach(() => {
  dir = Fs.realpathSync(Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-hooks-file-")))
  path = NodePath.join(dir, "hooks.json")
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

const ENTRY: HookEntry = { event: "Stop", command: "/usr/bin/node /opt/blctx/blctx-hook.mjs Stop" }
const PERSON = '{\n  "hooks": {\n    "Stop": [{ "hooks": [{ "type": "command", "command": "echo mine" }] }]\n  }\n}\n'

const withHooksFile = <A, E>(
  safeFs: Layer.Layer<SafeFs>,
  use: (owned: ReturnType<typeof makeOwnedHooksFile>) => Effect.Effect<A, E>
) =>
  Effect.flatMap(SafeFs, (fs) =>
    use(
      makeOwnedHooksFile(fs, {
        fileName: "hooks.json",
        agent: "Codex",
        unparsable: "Codex cannot load any hook from it as it is",
        reinstall: "blctx install codex --step codex_hooks",
        uninstall: "blctx uninstall codex"
      })
    )
  ).pipe(Effect.provide(safeFs))

/** What codex_hooks install does: read the file, then write it back with blctx's entry added. */
const addBlctxEntry = (owned: ReturnType<typeof makeOwnedHooksFile>) =>
  Effect.gen(function* () {
    const existing = yield* owned.read(path, "rerun")
    const doc = Option.match(existing, { onNone: () => ({ hooks: {} }), onSome: (e) => e.doc })
    yield* owned.write(
      path,
      addEntries(doc, [ENTRY], () => 5),
      Option.map(existing, (e) => e.entry)
    )
  })

const failureOf = <A>(result: Either.Either<A, StepFailure>): StepFailure => {
  if (Either.isRight(result)) throw new Error("expected a failure")
  return result.left
}

describe("the owned hooks file between check and use", () => {
  it.effect("writes the entry, keeping the person's hooks and the file's mode", () =>
    Effect.gen(function* () {
      Fs.writeFileSync(path, PERSON, { mode: 0o640 })
      Fs.chmodSync(path, 0o640)
      yield* withHooksFile(NodeSafeFsLive, addBlctxEntry)
      expect(Fs.readFileSync(path, "utf8")).toContain("echo mine")
      expect(Fs.readFileSync(path, "utf8")).toContain(ENTRY.command)
      expect(Fs.statSync(path).mode & 0o777).toBe(0o640)
    })
  )

  it.effect("refuses a hooks file swapped for a link after it was read; nothing is written through it", () =>
    Effect.gen(function* () {
      Fs.writeFileSync(path, PERSON, { mode: 0o600 })
      const target = outsideFile(NodePath.join(dir, "outside.json"), PERSON)
      const refused = failureOf(
        yield* Effect.either(
          withHooksFile(swappingSafeFs({ path, after: "read", swap: symlinkSwap(path, target.path) }), addBlctxEntry)
        )
      )
      expect(refused.detail).toBe(`${path} was replaced by a symbolic link between check and use; left untouched`)
      expect(target.untouched()).toBe(true)
    })
  )

  it.effect("refuses a hooks file swapped for a link after its lstat, before the read", () =>
    Effect.gen(function* () {
      Fs.writeFileSync(path, PERSON, { mode: 0o600 })
      const target = outsideFile(NodePath.join(dir, "outside.json"), PERSON)
      const refused = failureOf(
        yield* Effect.either(
          // The first lstat of the file is the ownership check's walk; the second is the read's own.
          withHooksFile(swappingSafeFs({ path, call: 2, swap: symlinkSwap(path, target.path) }), addBlctxEntry)
        )
      )
      expect(refused.detail).toBe(`${path} was replaced by a symbolic link between check and use; left untouched`)
      expect(target.untouched()).toBe(true)
    })
  )

  it.effect("refuses a hooks file that gained a hard link after it was read; the other name keeps its bytes", () =>
    Effect.gen(function* () {
      Fs.writeFileSync(path, PERSON, { mode: 0o600 })
      const alias = NodePath.join(dir, "alias.json")
      const refused = failureOf(
        yield* Effect.either(
          withHooksFile(swappingSafeFs({ path, after: "read", swap: extraLinkSwap(path, alias) }), addBlctxEntry)
        )
      )
      expect(refused.detail).toBe(`${path} gained a second hard link between check and use; left untouched`)
      expect(Fs.readFileSync(alias, "utf8")).toBe(PERSON)
    })
  )

  it.effect("uninstall keeps the record when the file was swapped for a link after it was read", () =>
    Effect.gen(function* () {
      Fs.writeFileSync(path, PERSON, { mode: 0o600 })
      yield* withHooksFile(NodeSafeFsLive, addBlctxEntry)
      const written = Fs.readFileSync(path, "utf8")
      const target = outsideFile(NodePath.join(dir, "outside.json"), written)
      const { kept, report } = yield* withHooksFile(
        swappingSafeFs({ path, after: "read", swap: symlinkSwap(path, target.path) }),
        (owned) => owned.removeRecorded([{ entries: [ENTRY] }], () => path, "installation")
      )
      expect(kept).toHaveLength(1)
      expect(failureOf(yield* Effect.either(report)).detail).toBe(
        `${path} was replaced by a symbolic link between check and use; left untouched`
      )
      expect(target.untouched()).toBe(true)
    })
  )
})
