import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { FsError, SafeFs } from "../fs/safe-fs.js"
import { importOnce, makeTempDir, withHistoryDb, writeTranscript } from "../importer/history-db.test-support.js"
import { coverage } from "./coverage.js"

let dir: string
beforeEach(() => {
  dir = makeTempDir("blctx-coverage-")
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

const transcript = (name: string, id: string, extra: ReadonlyArray<unknown> = []) =>
  writeTranscript(NodePath.join(dir, name), [
    { timestamp: "2026-03-01T10:00:00Z", type: "session_meta", payload: { id, cwd: "/w" } },
    {
      timestamp: "2026-03-01T10:00:01Z",
      type: "event_msg",
      payload: { type: "user_message", message: "token=abcdefgh123 please" }
    },
    ...extra
  ])

describe("coverage", () => {
  it.effect("counts what is imported and notices changed, missing, partial and conflicting sources", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        const a = transcript("a.jsonl", "0199f000-0000-7000-8000-000000000001")
        const b = transcript("b.jsonl", "0199f000-0000-7000-8000-000000000002", [
          { timestamp: "2026-03-01T10:00:02Z", type: "a_future_line_type", payload: {} }
        ])
        yield* importOnce(a)
        yield* importOnce(b)
        yield* importOnce(transcript("c.jsonl", "0199f000-0000-7000-8000-000000000001"))
        Fs.appendFileSync(a, "\n")
        Fs.rmSync(b)
        const c = yield* coverage
        expect(c.files).toEqual({ total: 3, indexed: 1, partial: 1, conflict: 1 })
        expect(c.sessions).toBe(2)
        expect(c.messages).toBe(2)
        expect(c.chunks).toBe(2)
        expect(c.vectors).toEqual([])
        expect(c.vectors_pending).toBe(2)
        expect(c.redactions).toBe(2)
        expect(c.changed_sources).toEqual([
          { path: a, reason: "changed" },
          { path: b, reason: "missing" }
        ])
        expect(c.partial_imports.map((p) => p.path)).toEqual([b])
        expect(c.conflicts[0]?.path).toBe(NodePath.join(dir, "c.jsonl"))
        expect(c.capture).toContain("never captures")
      })
    )
  )

  it.effect("reports a source it may not look at as unreadable, never as missing", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        const a = transcript("a.jsonl", "0199f000-0000-7000-8000-000000000001")
        yield* importOnce(a)
        const fs = yield* SafeFs
        // A permission error, as lstat reports it under a folder this user may not search.
        const denying = SafeFs.of({
          ...fs,
          lstat: (path) =>
            path === a
              ? Effect.fail(new FsError({ op: "lstat", path, code: "EACCES", message: "permission denied" }))
              : fs.lstat(path)
        })
        const c = yield* coverage.pipe(Effect.provideService(SafeFs, denying))
        expect(c.sources_missing).toBe(0)
        expect(c.sources_unreadable).toBe(1)
        expect(c.changed_sources).toEqual([{ path: a, reason: "unreadable" }])
      })
    )
  )
})
