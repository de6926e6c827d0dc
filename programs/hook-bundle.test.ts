import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"
import { describe, expect, it } from "vitest"
import { hookBundleViolations } from "../src/capture/hook-import-policy.js"

const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")

/** The hook handler's import graph, from its sources, bundled in memory as scripts/bundle.mjs does. */
const hookGraph = async () => {
  const result = await build({
    absWorkingDir: root,
    entryPoints: ["programs/hook.ts"],
    bundle: true,
    platform: "node",
    target: "node20",
    format: "esm",
    write: false,
    metafile: true,
    outdir: "out",
    logLevel: "silent"
  })
  return result.metafile
}

describe("the hook handler's bundle", () => {
  it("holds no effect, @effect, native addon or MCP module, and loads nothing but Node builtins", async () => {
    const metafile = await hookGraph()
    expect(hookBundleViolations(metafile)).toEqual([])
    const inputs = Object.keys(metafile.inputs)
    // The check sees packages at all: valibot is in the graph.
    expect(inputs.some((i) => i.includes("node_modules/valibot/"))).toBe(true)
    // The capture logic, the program, valibot, the logic's file system (the one adapter it wires
    // in), the plain data naming the agents and their manifest keys, and how a busy daemon is asked again.
    const besideCapture = [
      "layers/node-hook-fs.ts",
      "src/domain/agent-names.ts",
      "src/ownership/manifest-keys.ts",
      "src/rpc/busy-retry.ts"
    ]
    expect(
      inputs.filter(
        (i) =>
          !i.startsWith("src/capture/") &&
          !i.startsWith("programs/") &&
          !i.includes("node_modules/valibot/") &&
          !besideCapture.includes(i)
      )
    ).toEqual([])
    expect(inputs).toContain("layers/node-hook-fs.ts")
  })

  it("the policy catches what it forbids", () => {
    expect(
      hookBundleViolations({
        inputs: { "node_modules/effect/dist/esm/Schema.js": {}, "node_modules/@effect/rpc/dist/esm/RpcMessage.js": {} },
        outputs: {
          "out/hook.js": {
            imports: [
              { path: "better-sqlite3", external: true },
              { path: "node:fs", external: true }
            ]
          }
        }
      })
    ).toEqual([
      "bundles node_modules/effect/dist/esm/Schema.js",
      "bundles node_modules/@effect/rpc/dist/esm/RpcMessage.js",
      "imports better-sqlite3 at run time"
    ])
  })
})
