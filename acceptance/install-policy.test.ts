import { readFileSync } from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

/**
 * `npm ci` must work with no environment variable on any machine, a CUDA toolkit and no network
 * but the registry included: the package's own configuration decides which install scripts run.
 */
const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
const pkg = JSON.parse(readFileSync(NodePath.join(root, "package.json"), "utf8")) as {
  engines: Record<string, string>
  allowScripts: Record<string, boolean>
}
const lock = JSON.parse(readFileSync(NodePath.join(root, "package-lock.json"), "utf8")) as {
  packages: Record<string, { hasInstallScript?: boolean; optional?: boolean }>
}
const npmrc = readFileSync(NodePath.join(root, ".npmrc"), "utf8")

describe("the install-script policy", () => {
  it("denies onnxruntime-node's script, which would download GPU providers where it finds CUDA", () => {
    expect(pkg.allowScripts["onnxruntime-node"]).toBe(false)
  })

  it("covers every dependency that has an install script, so npm neither warns nor runs one unreviewed", () => {
    const withScripts = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== "" && entry.hasInstallScript === true)
      .map(([path]) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length))
    expect(withScripts.length).toBeGreaterThan(0)
    for (const name of withScripts) expect(Object.keys(pkg.allowScripts), name).toContain(name)
  })

  it("requires an npm that honours allowScripts, and stops older ones instead of half-installing", () => {
    expect(pkg.engines.npm).toBe(">=11.16")
    expect(npmrc).toMatch(/^engine-strict=true$/m)
  })
})
