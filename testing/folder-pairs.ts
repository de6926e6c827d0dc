import * as Fs from "node:fs"
import * as NodePath from "node:path"

/**
 * The layout rule, checked: dependencies between folders point one way. A folder is a
 * top-level code folder (programs, layers, testing, bench) or a concern under src (src/retrieval);
 * a pair of folders that import each other is a tangle a reader cannot follow from one end.
 * Tests and test support may reach across (they exercise several concerns at once), so only the
 * modules they test count.
 */

/** The folders whose modules count, relative to the repository root. */
export const CODE_ROOTS = ["src", "layers", "programs", "testing", "bench"] as const

/** One relative import between modules of different folders. */
export interface FolderImport {
  readonly importer: string
  readonly imported: string
}

/** Two folders that import each other, with the imports each way. */
export interface TwoWayPair {
  readonly folders: readonly [string, string]
  readonly forward: ReadonlyArray<FolderImport>
  readonly backward: ReadonlyArray<FolderImport>
}

const isCountedModule = (name: string) =>
  /\.(ts|mts)$/.test(name) && !name.endsWith(".d.ts") && !/\.test\.ts$|\.test-support\.ts$/.test(name)

/** The modules under `dir`, as paths relative to `root`. */
const modulesUnder = (root: string, dir: string): ReadonlyArray<string> => {
  const absolute = NodePath.join(root, dir)
  if (!Fs.existsSync(absolute)) return []
  return Fs.readdirSync(absolute, { withFileTypes: true }).flatMap((entry) => {
    const path = NodePath.join(dir, entry.name)
    if (entry.isDirectory()) return modulesUnder(root, path)
    return isCountedModule(entry.name) ? [path] : []
  })
}

/** The folder a module belongs to: src's concern folders, or the top-level folder. */
export const folderOf = (modulePath: string): string => {
  const parts = modulePath.split(/[\\/]/)
  return parts[0] === "src" && parts.length > 2 ? `src/${parts[1]}` : (parts[0] ?? modulePath)
}

// `from "./x.js"`, `import "./x.js"`, `import("./x.js")`: every relative specifier, over lines.
const RELATIVE_SPECIFIER = /(?:\bfrom|\bimport)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g

/** The relative imports of one module that cross into another folder. */
const crossingImports = (root: string, modulePath: string): ReadonlyArray<FolderImport> => {
  const text = Fs.readFileSync(NodePath.join(root, modulePath), "utf8")
  return [...text.matchAll(RELATIVE_SPECIFIER)].flatMap((match) => {
    const imported = NodePath.normalize(NodePath.join(NodePath.dirname(modulePath), match[1] ?? ""))
    return folderOf(imported) === folderOf(modulePath) ? [] : [{ importer: modulePath, imported }]
  })
}

/** Every pair of folders under `root` that import each other, in a stable order. */
export const twoWayPairs = (root: string): ReadonlyArray<TwoWayPair> => {
  const byDirection = new Map<string, Array<FolderImport>>()
  for (const modulePath of CODE_ROOTS.flatMap((dir) => modulesUnder(root, dir))) {
    for (const edge of crossingImports(root, modulePath)) {
      const key = `${folderOf(edge.importer)} -> ${folderOf(edge.imported)}`
      byDirection.set(key, [...(byDirection.get(key) ?? []), edge])
    }
  }
  return [...byDirection.keys()]
    .map((key) => key.split(" -> ") as [string, string])
    .filter(([a, b]) => a < b && byDirection.has(`${b} -> ${a}`))
    .sort(([a1, b1], [a2, b2]) => `${a1} ${b1}`.localeCompare(`${a2} ${b2}`))
    .map(([a, b]) => ({
      folders: [a, b] as const,
      forward: byDirection.get(`${a} -> ${b}`) ?? [],
      backward: byDirection.get(`${b} -> ${a}`) ?? []
    }))
}

/** A pair as a person reads it: the two folders and the imports that tie them. */
export const describePair = (pair: TwoWayPair): string =>
  [
    `${pair.folders[0]} <-> ${pair.folders[1]}`,
    ...[...pair.forward, ...pair.backward].map((edge) => `  ${edge.importer} imports ${edge.imported}`)
  ].join("\n")
