import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { describePair, folderOf, twoWayPairs } from "./folder-pairs.js"

const repositoryRoot = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")

const temporaryRoots: Array<string> = []
afterEach(() => {
  for (const root of temporaryRoots.splice(0)) Fs.rmSync(root, { recursive: true, force: true })
})

/** A throwaway repository holding `files` (path relative to its root → text). */
const repositoryWith = (files: Record<string, string>) => {
  const root = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "blctx-folder-pairs-"))
  temporaryRoots.push(root)
  for (const [path, text] of Object.entries(files)) {
    Fs.mkdirSync(NodePath.dirname(NodePath.join(root, path)), { recursive: true })
    Fs.writeFileSync(NodePath.join(root, path), text)
  }
  return root
}

describe("folder pairs", () => {
  it("names a concern under src, or the top-level folder", () => {
    expect(folderOf("src/retrieval/contract.ts")).toBe("src/retrieval")
    expect(folderOf("src/version.ts")).toBe("src")
    expect(folderOf("layers/sqlite-writer-lock.ts")).toBe("layers")
  })

  it("finds two folders that import each other, through any import form, and names the imports", () => {
    const root = repositoryWith({
      "src/notes/contract.ts": 'import { id } from "../retrieval/context-id.js"\nexport const note = id\n',
      "src/retrieval/context-id.ts": "export const id = 1\n",
      "src/retrieval/reads.ts":
        'export type { Note } from "../notes/types.js"\nconst load = () => import("../notes/contract.js")\n',
      "src/notes/types.ts": "export type Note = string\n",
      "layers/live.ts": 'import {\n  note\n} from "../src/notes/contract.js"\n',
      "testing/fake.ts": 'import "../layers/live.js"\n'
    })
    expect(twoWayPairs(root).map(describePair)).toEqual([
      [
        "src/notes <-> src/retrieval",
        "  src/notes/contract.ts imports src/retrieval/context-id.js",
        "  src/retrieval/reads.ts imports src/notes/types.js",
        "  src/retrieval/reads.ts imports src/notes/contract.js"
      ].join("\n")
    ])
  })

  it("lets tests and test support reach across", () => {
    const root = repositoryWith({
      "src/notes/contract.ts": 'import { id } from "../retrieval/context-id.js"\nexport const note = id\n',
      "src/retrieval/context-id.ts": "export const id = 1\n",
      "src/retrieval/reads.test.ts": 'import { note } from "../notes/contract.js"\n',
      "src/retrieval/reads.test-support.ts": 'import { note } from "../notes/contract.js"\n'
    })
    expect(twoWayPairs(root)).toEqual([])
  })

  it("holds for this repository: no two folders import each other", () => {
    expect(twoWayPairs(repositoryRoot).map(describePair)).toEqual([])
  })
})
