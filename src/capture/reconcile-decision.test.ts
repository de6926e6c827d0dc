import { describe, expect, it } from "vitest"
import { type FileSignature, type ReconcileFacts, reconcileVerdict } from "./reconcile-decision.js"

const PATH = "/home/a/.codex/sessions/2026/03/01/rollout-x.jsonl"
const now: FileSignature = { size: 2048, mtime_ms: 1_767_225_600_000, ino: 77 }
const before: FileSignature = { size: 1024, mtime_ms: 1_767_225_500_000, ino: 77 }

const facts = (over: Partial<ReconcileFacts> = {}): ReconcileFacts => ({
  path: PATH,
  look: { _tag: "File", signature: now },
  indexed: undefined,
  submitted: undefined,
  ...over
})

describe("whether a bound transcript needs importing", () => {
  it("is indexed when the index holds the file as it is now", () => {
    expect(reconcileVerdict(facts({ indexed: { signature: now, state: "indexed", note: null } }))).toEqual({
      _tag: "Indexed"
    })
    // A partially classified file is still in the index as it is.
    expect(reconcileVerdict(facts({ indexed: { signature: now, state: "partial", note: null } }))._tag).toBe("Indexed")
  })

  it("queues an import for a file never indexed or changed since (size, time or inode)", () => {
    expect(reconcileVerdict(facts())).toEqual({ _tag: "Submit", signature: now })
    expect(reconcileVerdict(facts({ indexed: { signature: before, state: "indexed", note: null } }))).toEqual({
      _tag: "Submit",
      signature: now
    })
    const replaced = { ...now, ino: 78 }
    expect(
      reconcileVerdict(
        facts({
          look: { _tag: "File", signature: replaced },
          indexed: { signature: now, state: "indexed", note: null }
        })
      )
    ).toEqual({ _tag: "Submit", signature: replaced })
  })

  it("waits while the import queued for it is queued or running", () => {
    for (const state of ["queued", "running"]) {
      expect(reconcileVerdict(facts({ submitted: { signature: now, job: { state, error: null } } }))).toEqual({
        _tag: "Waiting"
      })
    }
  })

  it("does not queue the same content again once an import ran and left it out, saying why", () => {
    const verdict = reconcileVerdict(
      facts({ submitted: { signature: now, job: { state: "partial", error: "not wholly imported: is a FIFO" } } })
    )
    expect(verdict).toEqual({ _tag: "Error", reason: `${PATH} was not indexed: not wholly imported: is a FIFO` })
    // It changed since: queued again.
    expect(
      reconcileVerdict(facts({ submitted: { signature: before, job: { state: "failed", error: "x" } } }))._tag
    ).toBe("Submit")
    // A cancelled or superseded import never tried: queued again.
    expect(
      reconcileVerdict(facts({ submitted: { signature: now, job: { state: "cancelled", error: null } } }))._tag
    ).toBe("Submit")
  })

  it("waits for a transcript the agent has not written yet, one never indexed nor queued", () => {
    expect(reconcileVerdict(facts({ look: { _tag: "Missing" }, indexed: undefined, submitted: undefined }))).toEqual({
      _tag: "Waiting"
    })
  })

  it("reports a path that vanished, is a link or not a regular file, or cannot be examined", () => {
    expect(
      reconcileVerdict(facts({ look: { _tag: "Missing" }, indexed: { signature: now, state: "indexed", note: null } }))
    ).toEqual({
      _tag: "Error",
      reason: `${PATH} no longer exists`
    })
    expect(
      reconcileVerdict(facts({ look: { _tag: "Missing" }, submitted: { signature: now, job: undefined } }))
    ).toEqual({ _tag: "Error", reason: `${PATH} no longer exists` })
    expect(reconcileVerdict(facts({ look: { _tag: "NotRegular", kind: "symlink" } }))).toEqual({
      _tag: "Error",
      reason: `${PATH} is a symbolic link, which blctx never follows`
    })
    expect(reconcileVerdict(facts({ look: { _tag: "NotRegular", kind: "directory" } }))).toEqual({
      _tag: "Error",
      reason: `${PATH} is a directory, not a regular file`
    })
    expect(reconcileVerdict(facts({ look: { _tag: "Unexaminable", code: "EACCES" } }))).toEqual({
      _tag: "Error",
      reason: `${PATH} cannot be examined (EACCES)`
    })
  })

  it("reports a file the index holds as a conflict", () => {
    const verdict = reconcileVerdict(
      facts({ indexed: { signature: now, state: "conflict", note: "session s1 is already imported from /x.jsonl" } })
    )
    expect(verdict).toEqual({
      _tag: "Error",
      reason: `${PATH} was not indexed: session s1 is already imported from /x.jsonl`
    })
  })
})
