import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { ModelFile, ModelSpec } from "../domain/model-spec.js"
import { type Entry, SafeFs } from "../fs/safe-fs.js"
import { outsideFile, swappingSafeFs, symlinkSwap } from "../fs/swapping-safe-fs.test-support.js"
import { fingerprintOf } from "./fingerprint.js"
import {
  type CheckedFile,
  ModelVerification,
  readVerification,
  type StoredVerification,
  VERIFICATION_VERSION,
  verificationPath,
  verificationProblem,
  verificationText
} from "./model-verification.js"

const spec = new ModelSpec({
  endpoint: "http://127.0.0.1:9",
  repo: "test/model",
  revision: "r1",
  dims: 4,
  onnx_file: "m.onnx",
  files: [
    new ModelFile({ name: "m.onnx", size: 10, sha256: "a".repeat(64) }),
    new ModelFile({ name: "tokenizer.json", size: 20, sha256: "b".repeat(64) })
  ],
  pooling: "cls",
  normalize: "l2",
  max_tokens: 16,
  prefixes: { query: "", passage: "" },
  sanity: { query: "q", passages: ["x", "q"], expected_first: 1 }
})
const fingerprint = fingerprintOf(spec)
const FOLDER = "/cache/blctx/models/test--model--0123456789abcdef"

const entry = (size: number, mtimeMs: number): Option.Option<Entry> =>
  Option.some({ kind: "file", mode: 0o600, size, mtimeMs, ino: 1, nlink: 1, uid: 1000 })
const entries = [entry(10, 1000), entry(20, 2000)]
const checked: ReadonlyArray<CheckedFile> = [
  { name: "m.onnx", size: 10, sha256: "a".repeat(64), mtime_ms: 1000 },
  { name: "tokenizer.json", size: 20, sha256: "b".repeat(64), mtime_ms: 2000 }
]

const record = (over: Partial<ConstructorParameters<typeof ModelVerification>[0]> = {}): StoredVerification => ({
  _tag: "present",
  record: new ModelVerification({
    version: VERIFICATION_VERSION,
    fingerprint: fingerprint.key,
    model: fingerprint.label,
    checked_at: "2026-02-02T00:00:00.000Z",
    files: checked,
    sanity: spec.sanity,
    result: { _tag: "passed", first: 1, score: 1 },
    ...over
  })
})

const problem = (stored: StoredVerification, at: ReadonlyArray<Option.Option<Entry>> = entries, s = spec) =>
  Option.getOrNull(verificationProblem(stored, s, fingerprintOf(s), FOLDER, at))

describe("verificationProblem: a model is used only after it passed every check", () => {
  it("accepts a passed record of this fingerprint, sanity check and these files, unchanged since", () => {
    expect(problem(record())).toBeNull()
  })

  it("refuses a folder whose checks were never recorded, or whose record cannot be read", () => {
    expect(problem({ _tag: "absent" })).toBe(`no check of ${FOLDER} is recorded`)
    expect(problem({ _tag: "invalid", reason: "x is not a verification record" })).toBe(
      "x is not a verification record"
    )
  })

  it("refuses a failed check, saying what failed", () => {
    const failed = record({
      files: [],
      result: { _tag: "failed", failure: "ranked-retrieval check failed: passage 1 ranked first, expected 0" }
    })
    expect(problem(failed)).toBe("ranked-retrieval check failed: passage 1 ranked first, expected 0")
  })

  it("refuses a record of another fingerprint", () => {
    expect(problem(record({ fingerprint: "f".repeat(16) }))).toBe(
      `${FOLDER}/.blctx-verification.json records fingerprint ${"f".repeat(16)}, not ${fingerprint.key}`
    )
  })

  it("refuses when the configured sanity check is not the one that passed", () => {
    const changed = new ModelSpec({ ...spec, sanity: { ...spec.sanity, expected_first: 0 } })
    // The sanity check is not part of the fingerprint: the folder is the same.
    expect(fingerprintOf(changed).key).toBe(fingerprint.key)
    expect(problem(record(), entries, changed)).toBe(
      `the sanity check in the configuration changed after ${FOLDER} was checked`
    )
  })

  it("refuses a record that does not cover every pinned file", () => {
    expect(problem(record({ files: checked.slice(0, 1) }))).toBe(
      `${FOLDER}/.blctx-verification.json does not list exactly the files of the model`
    )
    const otherHash = [checked[0] as CheckedFile, { ...(checked[1] as CheckedFile), sha256: "c".repeat(64) }]
    expect(problem(record({ files: otherHash }))).toBe("tokenizer.json was not checked against its pin")
  })

  it("refuses a file that changed after it was checked (size or modification time)", () => {
    expect(problem(record(), [entry(10, 1000), entry(20, 2001)])).toBe(
      `${FOLDER}/tokenizer.json changed after it was checked`
    )
    expect(problem(record(), [entry(11, 1000), entry(20, 2000)])).toBe(`${FOLDER}/m.onnx changed after it was checked`)
    expect(problem(record(), [Option.none(), entry(20, 2000)])).toBe(`${FOLDER}/m.onnx changed after it was checked`)
  })
})

describe("readVerification between check and use", () => {
  it.effect("a record swapped for a link to another file after its lstat is refused, never read through", () => {
    const dir = Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-verification-"))
    const path = verificationPath(dir)
    const valid = verificationText((record() as { readonly record: ModelVerification }).record)
    Fs.writeFileSync(path, valid, { mode: 0o600 })
    // A forged record elsewhere, which would pass if it were read through the link.
    const forged = outsideFile(NodePath.join(dir, "forged.json"), valid)
    return Effect.gen(function* () {
      const fs = yield* SafeFs
      const stored = yield* readVerification(fs, dir)
      expect(stored).toEqual({
        _tag: "invalid",
        reason: `${path} was replaced by a symbolic link between check and use; left untouched`
      })
      expect(forged.untouched()).toBe(true)
    }).pipe(
      Effect.provide(swappingSafeFs({ path, swap: symlinkSwap(path, forged.path) })),
      Effect.ensuring(Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
    )
  })
})
