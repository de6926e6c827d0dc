import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"
import { describe, expect, it } from "vitest"
import { fastPathOutputs, fastPathViolations, mcpFrontViolations } from "../src/cli/fast-path-import-policy.js"

const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")

/** `blctx`'s split bundle, from its sources, built in memory as scripts/bundle.mjs does. */
const cliGraph = async () => {
  const result = await build({
    absWorkingDir: root,
    entryPoints: { blctx: "programs/cli.ts", "blctx-mcp": "programs/mcp.ts" },
    bundle: true,
    splitting: true,
    chunkNames: "chunks/[name]-[hash]",
    platform: "node",
    target: "node20",
    format: "esm",
    write: false,
    metafile: true,
    outdir: "out",
    external: ["better-sqlite3", "onnxruntime-node", "sqlite-vec", "@anush008/tokenizers", "fastembed"],
    logLevel: "silent"
  })
  return result.metafile
}

describe("the search fast path's part of the blctx bundle", () => {
  it("reaches fast-search through effect-free chunks that load only Node builtins, and the full CLI only beyond", async () => {
    const metafile = await cliGraph()
    expect(fastPathViolations(metafile, "programs/cli.ts")).toEqual([])
    const loaded = fastPathOutputs(metafile, "programs/cli.ts")
    const inputs = loaded.flatMap((path) => Object.keys(metafile.outputs[path]?.inputs ?? {}))
    // The check sees what it should: the fast module and the search schemas' generated copy are in
    // the graph, cli-main is not.
    expect(inputs).toContain("src/cli/fast-search.ts")
    expect(inputs).toContain("src/cli/fast-search-schema.ts")
    expect(inputs).not.toContain("programs/cli-main.ts")
    // ...while the whole bundle does hold effect, behind the dynamic import of the CLI.
    const all = Object.values(metafile.outputs).flatMap((o) => Object.keys(o.inputs))
    expect(all.some((i) => i.includes("node_modules/effect/"))).toBe(true)
  })

  it("the policy catches an effect module and a run-time package import on the fast path", () => {
    const metafile = {
      outputs: {
        "out/blctx.js": {
          entryPoint: "programs/cli.ts",
          inputs: { "programs/cli.ts": {} },
          imports: [
            { path: "out/chunks/shared.js", kind: "import-statement" },
            { path: "out/chunks/fast-search.js", kind: "dynamic-import" },
            { path: "out/chunks/cli-main.js", kind: "dynamic-import" }
          ]
        },
        "out/chunks/shared.js": { inputs: { "src/version.ts": {} }, imports: [] },
        "out/chunks/fast-search.js": {
          entryPoint: "src/cli/fast-search.ts",
          inputs: { "src/cli/fast-search.ts": {}, "node_modules/effect/dist/esm/Schema.js": {} },
          imports: [{ path: "better-sqlite3", kind: "import-statement", external: true }]
        },
        "out/chunks/cli-main.js": {
          entryPoint: "programs/cli-main.ts",
          inputs: { "node_modules/@effect/cli/dist/esm/index.js": {} },
          imports: []
        }
      }
    }
    expect(fastPathViolations(metafile, "programs/cli.ts")).toEqual([
      "bundles node_modules/effect/dist/esm/Schema.js into out/chunks/fast-search.js",
      "out/chunks/fast-search.js imports better-sqlite3 at run time"
    ])
    expect(fastPathViolations({ outputs: {} }, "programs/cli.ts")).toEqual([
      "programs/cli.ts does not import src/cli/fast-search"
    ])
  })
})

describe("the MCP server's front in the blctx-mcp bundle", () => {
  it("loads only effect-free modules and Node builtins; the full server, with effect and the SDK, is a chunk beyond", async () => {
    const metafile = await cliGraph()
    expect(mcpFrontViolations(metafile, "programs/mcp.ts")).toEqual([])
    const entry = Object.values(metafile.outputs).find((o) => o.entryPoint === "programs/mcp.ts")
    expect(Object.keys(entry?.inputs ?? {})).toContain("programs/mcp.ts")
    // The full server is a chunk of its own, and the bundle does hold the SDK: behind it.
    expect(Object.values(metafile.outputs).some((o) => o.entryPoint === "programs/mcp-main.ts")).toBe(true)
    const all = Object.values(metafile.outputs).flatMap((o) => Object.keys(o.inputs))
    expect(all.some((i) => i.includes("node_modules/@modelcontextprotocol/"))).toBe(true)
    expect(mcpFrontViolations({ outputs: {} }, "programs/mcp.ts")).toEqual(["programs/mcp.ts is not in the build"])
  })
})
