// Bundles the command-line entry points into single files: Node starts one pre-linked module
// far faster than the hundreds of ESM files behind `effect`, and a CLI is started for every use.
import { build } from "esbuild"

await build({
  entryPoints: { blctx: "dist/programs/cli.js" },
  outdir: "dist/bin",
  outExtension: { ".js": ".mjs" },
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  sourcemap: true,
  logLevel: "warning",
  // Native addons and packages that locate files next to themselves stay in node_modules.
  external: ["better-sqlite3", "onnxruntime-node", "sqlite-vec", "@anush008/tokenizers", "fastembed"],
  // Bundled CommonJS dependencies call require(); give the ESM bundle one.
  banner: {
    js: "import { createRequire as __blctxRequire } from 'node:module'; const require = __blctxRequire(import.meta.url);"
  }
})
