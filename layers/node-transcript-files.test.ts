import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { TranscriptFiles } from "../src/transcripts/transcript-files.js"
import { NodeTranscriptFilesLive } from "./node-transcript-files.js"

let dir: string
beforeEach(() => {
  dir = Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-files-"))
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

/** Opens `path` and reports what happened; a bound turns a hang into a failed test, not a stuck one. */
const openOutcome = (path: string) =>
  Effect.scoped(Effect.flatMap(TranscriptFiles, (files) => files.open(path))).pipe(
    Effect.map((handle) => ({ ok: true as const, size: handle.size })),
    Effect.catchAll((e) =>
      Effect.succeed({ ok: false as const, code: e.code, message: e.message, fix: e.remediation })
    ),
    Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => new Error(`opening ${path} did not return`) }),
    Effect.provide(NodeTranscriptFilesLive)
  )

describe("NodeTranscriptFilesLive", () => {
  it.live("opens a regular file and reads it", () =>
    Effect.gen(function* () {
      const path = NodePath.join(dir, "a.jsonl")
      Fs.writeFileSync(path, "hello\n")
      expect(yield* openOutcome(path)).toEqual({ ok: true, size: 6 })
    })
  )

  it.live("refuses a FIFO at once, without waiting for a writer", () =>
    Effect.gen(function* () {
      const path = NodePath.join(dir, "pipe.jsonl")
      execFileSync("mkfifo", [path])
      const outcome = yield* openOutcome(path)
      expect(outcome).toMatchObject({ ok: false, code: "ENOTREG" })
      expect(outcome.ok === false && outcome.message).toContain("FIFO")
      expect(outcome.ok === false && outcome.fix).toContain("regular file")
    })
  )

  it.live("refuses a symbolic link without following it, even to a regular file", () =>
    Effect.gen(function* () {
      const target = NodePath.join(dir, "target.jsonl")
      Fs.writeFileSync(target, "x\n")
      const link = NodePath.join(dir, "link.jsonl")
      Fs.symlinkSync(target, link)
      const outcome = yield* openOutcome(link)
      expect(outcome).toMatchObject({ ok: false, code: "ELOOP" })
      expect(outcome.ok === false && outcome.message).toContain("symbolic link")
    })
  )

  it.live("refuses directories, sockets and devices, naming what they are", () =>
    Effect.gen(function* () {
      const socketPath = NodePath.join(dir, "s.sock")
      const server = Net.createServer()
      yield* Effect.async<void>((resume) => {
        server.listen(socketPath, () => resume(Effect.void))
      })
      yield* Effect.addFinalizer(() => Effect.sync(() => server.close()))
      const outcomes = yield* Effect.forEach([dir, socketPath, "/dev/null"], openOutcome)
      expect(outcomes.map((o) => (o.ok ? "ok" : o.code))).toEqual(["EISDIR", "ENOTREG", "ENOTREG"])
      expect(outcomes.map((o) => (o.ok ? "" : o.message))).toEqual([
        "is a directory, not a regular file",
        "is a socket, not a regular file",
        "is a character device, not a regular file"
      ])
    }).pipe(Effect.scoped)
  )

  // Root reads whatever the mode says, so this runs only as an ordinary user.
  it.live.skipIf(process.getuid?.() === 0)("a file it may not read is refused with EACCES, saying so", () =>
    Effect.gen(function* () {
      const path = NodePath.join(dir, "private.jsonl")
      Fs.writeFileSync(path, "x\n")
      Fs.chmodSync(path, 0o000)
      const outcome = yield* openOutcome(path)
      expect(outcome).toMatchObject({ ok: false, code: "EACCES" })
      expect(outcome.ok === false && outcome.fix).toContain("permissions")
    })
  )
})
