import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { WriterLock } from "../src/daemon/writer-lock.js"
import { SqliteWriterLockLive } from "./sqlite-writer-lock.js"

const tempLockFile = () => NodePath.join(mkdtempSync(NodePath.join(tmpdir(), "blctx-lock-")), "writer.lock")

describe("SqliteWriterLock", () => {
  it.effect("refuses a second holder at once and is free again after release", () =>
    Effect.gen(function* () {
      const lock = yield* WriterLock
      const file = tempLockFile()
      const scope = yield* Scope.make()
      yield* lock.acquire(file).pipe(Scope.extend(scope))
      const second = yield* Effect.scoped(lock.acquire(file)).pipe(Effect.exit)
      expect(Exit.isFailure(second) && JSON.stringify(second.cause)).toContain("WriterLockHeld")
      yield* Scope.close(scope, Exit.void)
      yield* Effect.scoped(lock.acquire(file))
      rmSync(NodePath.dirname(file), { recursive: true, force: true })
    }).pipe(Effect.provide(SqliteWriterLockLive))
  )

  it.live("is released by the kernel when the holding process is killed with SIGKILL", () =>
    Effect.gen(function* () {
      const lock = yield* WriterLock
      const file = tempLockFile()
      const sqlite = createRequire(import.meta.url).resolve("better-sqlite3")
      const holder = spawn(
        process.execPath,
        [
          "-e",
          `const D = require(${JSON.stringify(sqlite)}); const db = new D(${JSON.stringify(file)}); db.exec("BEGIN EXCLUSIVE"); console.log("held"); setInterval(() => {}, 1000)`
        ],
        { stdio: ["ignore", "pipe", "inherit"] }
      )
      yield* Effect.async<void>((resume) => {
        holder.stdout.once("data", () => resume(Effect.void))
      })
      const whileHeld = yield* Effect.scoped(lock.acquire(file)).pipe(Effect.exit)
      expect(Exit.isFailure(whileHeld)).toBe(true)
      holder.kill("SIGKILL")
      yield* Effect.async<void>((resume) => {
        holder.once("exit", () => resume(Effect.void))
      })
      yield* Effect.scoped(lock.acquire(file))
      rmSync(NodePath.dirname(file), { recursive: true, force: true })
    }).pipe(Effect.provide(SqliteWriterLockLive))
  )
})
