import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as NodePath from "node:path"

/**
 * An npm registry on loopback, so a test can `npm install -g` the packed package with no network:
 * its packuments are made from the project's lock file (every package the product needs, at the
 * exact version and integrity `npm ci` installed), and its tarballs are the very files `npm ci`
 * left in npm's cache, found by their integrity. A package the cache lacks is answered 404 and
 * named in `missing`, so a failing install says why.
 *
 * It also serves prebuilt native addons the way their download hosts do (`prebuilds`), since the
 * machines that run the tests cannot reach GitHub releases.
 */
export interface LocalRegistry {
  readonly url: string
  /** Tarballs npm asked for that the cache did not hold. */
  readonly missing: ReadonlyArray<string>
  /** Serves `body` at `path` (for prebuilt binaries). */
  readonly serveFile: (path: string, body: Buffer) => void
  readonly close: () => Promise<void>
}

interface LockEntry {
  readonly name?: string
  readonly version: string
  readonly integrity?: string
  readonly dev?: boolean
  readonly [field: string]: unknown
}

/** The manifest fields npm reads from a packument to resolve and place a version. */
const MANIFEST_FIELDS = [
  "dependencies",
  "optionalDependencies",
  "peerDependencies",
  "peerDependenciesMeta",
  "bin",
  "engines",
  "os",
  "cpu",
  "libc",
  "license",
  "hasInstallScript"
] as const

const nameOf = (path: string, entry: LockEntry) =>
  entry.name ?? path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length)

/** Where npm's content-addressed cache keeps a file of this integrity. */
const cachePathOf = (cacheDir: string, integrity: string) => {
  const [algorithm, digest] = integrity.split(" ")[0]?.split("-", 2) ?? []
  if (algorithm === undefined || digest === undefined) return undefined
  const hex = Buffer.from(digest, "base64").toString("hex")
  return NodePath.join(cacheDir, "_cacache", "content-v2", algorithm, hex.slice(0, 2), hex.slice(2, 4), hex.slice(4))
}

export const startLocalRegistry = async (projectRoot: string): Promise<LocalRegistry> => {
  const lock = JSON.parse(Fs.readFileSync(NodePath.join(projectRoot, "package-lock.json"), "utf8")) as {
    readonly packages: Record<string, LockEntry>
  }
  const cacheDir = execFileSync("npm", ["config", "get", "cache"], { encoding: "utf8" }).trim()
  const packages = new Map<string, Map<string, LockEntry>>()
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === "" || entry.dev === true || entry.integrity === undefined) continue
    const name = nameOf(path, entry)
    const versions = packages.get(name) ?? new Map<string, LockEntry>()
    versions.set(entry.version, entry)
    packages.set(name, versions)
  }
  const files = new Map<string, Buffer>()
  const missing: Array<string> = []

  const server = Http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://localhost")
    const path = decodeURIComponent(url.pathname)
    const file = files.get(path)
    if (file !== undefined) {
      response.writeHead(200, { "content-type": "application/octet-stream" }).end(file)
      return
    }
    const tarball = /^\/-\/tarballs\/(.+)\/-\/([^/]+)$/.exec(path)
    if (tarball !== null) {
      const [, name = "", version = ""] = tarball
      const entry = packages.get(name)?.get(version)
      const cached = entry?.integrity === undefined ? undefined : cachePathOf(cacheDir, entry.integrity)
      if (cached === undefined || !Fs.existsSync(cached)) {
        missing.push(`${name}@${version}`)
        response.writeHead(404).end()
        return
      }
      response.writeHead(200, { "content-type": "application/octet-stream" })
      Fs.createReadStream(cached).pipe(response)
      return
    }
    const name = path.slice(1)
    const versions = packages.get(name)
    if (versions === undefined) {
      response.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}')
      return
    }
    const base = `http://${request.headers.host ?? "127.0.0.1"}`
    const manifests = Object.fromEntries(
      [...versions.values()].map((entry) => [
        entry.version,
        {
          name,
          version: entry.version,
          ...Object.fromEntries(MANIFEST_FIELDS.flatMap((f) => (entry[f] === undefined ? [] : [[f, entry[f]]]))),
          dist: { tarball: `${base}/-/tarballs/${name}/-/${entry.version}`, integrity: entry.integrity }
        }
      ])
    )
    const latest = [...versions.keys()].at(-1) ?? ""
    response
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ name, "dist-tags": { latest }, versions: manifests }))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    missing,
    serveFile: (path, body) => {
      files.set(path, body)
    },
    close: () => new Promise((resolve) => server.close(() => resolve()))
  }
}
