import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Ref } from "effect"
import { NodeSafeFsLive } from "../../layers/node-safe-fs.js"
import { SafeFs } from "../fs/safe-fs.js"
import { DaemonProcess } from "./daemon-process.js"
import { changeOf, HeldFiles, HeldFilesLive } from "./held-files.js"

// Which file a path names is its device and inode: a daemon compares what it opened with what the
// path holds now, and stops (once) when they differ.

const tempDir = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-held-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

const identityOf = (path: string) =>
  Effect.flatMap(SafeFs, (fs) => fs.lstat(path)).pipe(
    Effect.map(Option.getOrThrow),
    Effect.map((e) => ({ dev: e.dev, ino: e.ino }))
  )

/** HeldFilesLive with a process that counts its stop requests. */
const heldFiles = Effect.gen(function* () {
  const stops = yield* Ref.make(0)
  const process = Layer.succeed(DaemonProcess, {
    pid: 4242,
    node: "/usr/bin/node",
    argv: ["blctxd"],
    requestStop: Ref.update(stops, (n) => n + 1)
  })
  const held = yield* HeldFiles.pipe(Effect.provide(HeldFilesLive.pipe(Layer.provide(process))))
  return { held, stops }
})

describe("changeOf", () => {
  it.scoped("the same file is no change, whatever was written to it or linked to it", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const path = NodePath.join(dir, "context.db")
      Fs.writeFileSync(path, "one")
      const held = yield* identityOf(path)
      Fs.appendFileSync(path, "two")
      Fs.linkSync(path, NodePath.join(dir, "backup.db"))
      expect(yield* changeOf(path, held, "database")).toEqual(Option.none())
    }).pipe(Effect.provide(NodeSafeFsLive))
  )

  it.scoped("a removed path and a path replaced by another file are changes, and say which", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const path = NodePath.join(dir, "context.db")
      Fs.writeFileSync(path, "held")
      const held = yield* identityOf(path)
      Fs.renameSync(path, NodePath.join(dir, "moved.db"))
      expect(yield* changeOf(path, held, "database")).toEqual(
        Option.some(`the database blctxd holds was removed from ${path}`)
      )
      Fs.writeFileSync(path, "another")
      expect(yield* changeOf(path, held, "database")).toEqual(
        Option.some(`the database blctxd holds was replaced by another file at ${path}`)
      )
    }).pipe(Effect.provide(NodeSafeFsLive))
  )
})

describe("HeldFiles", () => {
  it.scoped("passes while every held file is at its path; nothing at a path is not held", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const path = NodePath.join(dir, "context.db")
      Fs.writeFileSync(path, "held")
      const { held, stops } = yield* heldFiles
      expect(yield* held.hold("database", path)).toBe(true)
      expect(yield* held.hold("database WAL", `${path}-wal`)).toBe(false)
      yield* held.check
      yield* held.check
      expect(yield* Ref.get(stops)).toBe(0)
    }).pipe(Effect.provide(NodeSafeFsLive))
  )

  it.scoped("a replaced file fails every later check, stops the daemon once and removes its own socket", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const database = NodePath.join(dir, "context.db")
      const socket = NodePath.join(dir, "blctxd.sock")
      Fs.writeFileSync(database, "held")
      Fs.writeFileSync(socket, "bound")
      const { held, stops } = yield* heldFiles
      yield* held.hold("database", database)
      yield* held.hold("socket", socket, { removeOnStop: true })

      Fs.writeFileSync(`${database}.new`, "another")
      Fs.renameSync(`${database}.new`, database)
      const refused = yield* Effect.flip(held.check)
      expect(refused).toMatchObject({ _tag: "HeldFileReplaced", path: database })
      expect(refused.message).toContain(`the database blctxd holds was replaced by another file at ${database}`)
      expect(refused.message).toContain("blctxd is stopping")
      expect(Fs.existsSync(socket)).toBe(false)
      expect(yield* Ref.get(stops)).toBe(1)

      // Still refused (even if the file came back), and no second stop.
      const again = yield* Effect.flip(held.check)
      expect(again.path).toBe(database)
      expect(yield* Ref.get(stops)).toBe(1)
    }).pipe(Effect.provide(NodeSafeFsLive))
  )

  it.scoped("a socket that is no longer its own is left alone when the daemon stops", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const socket = NodePath.join(dir, "blctxd.sock")
      const pidfile = NodePath.join(dir, "blctxd.pid")
      Fs.writeFileSync(socket, "bound")
      Fs.writeFileSync(pidfile, "4242\n")
      const { held, stops } = yield* heldFiles
      yield* held.hold("socket", socket, { removeOnStop: true })
      yield* held.hold("pidfile", pidfile)
      // A successor daemon bound its own socket and wrote its own pidfile (the old socket is moved
      // aside rather than removed: a bound socket keeps its inode, which a new file cannot reuse).
      Fs.renameSync(socket, NodePath.join(dir, "old.sock"))
      Fs.writeFileSync(socket, "successor")
      Fs.writeFileSync(`${pidfile}.tmp`, "5151\n")
      Fs.renameSync(`${pidfile}.tmp`, pidfile)
      const refused = yield* Effect.flip(held.check)
      expect(refused.path).toBe(socket)
      expect(Fs.readFileSync(socket, "utf8")).toBe("successor")
      expect(yield* Ref.get(stops)).toBe(1)
    }).pipe(Effect.provide(NodeSafeFsLive))
  )
})
