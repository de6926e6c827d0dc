import { spawn } from "node:child_process"
import { lstatSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { NodeSafeFsLive } from "../../layers/node-safe-fs.js"
import { outsideFile, swappingSafeFs, symlinkSwap } from "../fs/swapping-safe-fs.test-support.js"
import { prepareSocketPath } from "./socket-file.js"

const tempDir = () => mkdtempSync(NodePath.join(tmpdir(), "blctx-sock-"))

/** A socket file left at `path` by a process killed with SIGKILL after it listened. */
const leaveStaleSocket = (path: string) =>
  Effect.gen(function* () {
    const server = spawn(
      process.execPath,
      ["-e", `require("net").createServer().listen(${JSON.stringify(path)}, () => console.log("up"))`],
      { stdio: ["ignore", "pipe", "inherit"] }
    )
    yield* Effect.async<void>((resume) => {
      server.stdout.once("data", () => resume(Effect.void))
    })
    server.kill("SIGKILL")
    yield* Effect.async<void>((resume) => {
      server.once("exit", () => resume(Effect.void))
    })
  })

describe("prepareSocketPath", () => {
  it.effect("accepts a free path and refuses a symbolic link or a regular file, leaving them alone", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const path = NodePath.join(dir, "blctxd.sock")
      expect(yield* prepareSocketPath(path)).toBe("absent")
      writeFileSync(NodePath.join(dir, "target"), "x")
      symlinkSync(NodePath.join(dir, "target"), path)
      const link = yield* prepareSocketPath(path).pipe(Effect.exit)
      expect(Exit.isFailure(link) && JSON.stringify(link.cause)).toContain("symbolic link")
      expect(lstatSync(path).isSymbolicLink()).toBe(true)
      rmSync(path)
      writeFileSync(path, "not a socket")
      const file = yield* prepareSocketPath(path).pipe(Effect.exit)
      expect(Exit.isFailure(file) && JSON.stringify(file.cause)).toContain("not a socket")
      expect(lstatSync(path).isFile()).toBe(true)
      rmSync(dir, { recursive: true, force: true })
    }).pipe(Effect.provide(NodeSafeFsLive))
  )

  it.live("replaces a stale socket left by a killed process", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const path = NodePath.join(dir, "blctxd.sock")
      yield* leaveStaleSocket(path)
      expect(lstatSync(path).isSocket()).toBe(true)
      expect(yield* prepareSocketPath(path)).toBe("replaced-stale")
      expect(() => lstatSync(path)).toThrow()
      rmSync(dir, { recursive: true, force: true })
    }).pipe(Effect.provide(NodeSafeFsLive))
  )

  it.live("refuses a stale socket swapped for a link after its check; the target survives", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const path = NodePath.join(dir, "blctxd.sock")
      yield* leaveStaleSocket(path)
      const outside = outsideFile(NodePath.join(dir, "outside"))
      const refused = yield* prepareSocketPath(path).pipe(
        Effect.flip,
        Effect.provide(swappingSafeFs({ path, swap: symlinkSwap(path, outside.path) }))
      )
      expect(refused.reason).toBe(`${path} was replaced by a symbolic link between check and use; left untouched`)
      expect(outside.untouched()).toBe(true)
      expect(lstatSync(path).isSymbolicLink()).toBe(true)
      rmSync(dir, { recursive: true, force: true })
    })
  )
})
