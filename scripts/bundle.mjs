// Bundles the command-line entry points into single files: Node starts one pre-linked module
// far faster than the hundreds of ESM files behind `effect`, and a CLI is started for every use.
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs"
import { build } from "esbuild"
import { hookBundleViolations } from "../dist/src/capture/hook-import-policy.js"
import { fastPathViolations, mcpFrontViolations } from "../dist/src/cli/fast-path-import-policy.js"
import { fastSearchSchema } from "../dist/src/cli/fast-search-derive.js"
import { SEARCH_ANSWER_SCHEMA, SEARCH_OPTION_ROWS } from "../dist/src/cli/fast-search-schema.js"
import { HANDSHAKE_TABLE_FILE } from "../dist/src/mcp/handshake.js"
import { deriveHandshakeTable } from "../dist/src/mcp/handshake-derive.js"

// ONNX Runtime loads from the package's own copy (scripts/vendor-onnxruntime.mjs), through the
// package.json "imports" entry, which resolves the same from every output folder and chunk.
const vendoredOnnxRuntime = {
  name: "vendored-onnxruntime",
  setup(build) {
    build.onResolve({ filter: /^onnxruntime-node$/ }, () => ({ path: "#onnxruntime", external: true }))
  }
}

const common = {
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  outExtension: { ".js": ".mjs" },
  sourcemap: true,
  logLevel: "warning",
  // Native addons and packages that locate files next to themselves stay in node_modules.
  external: ["better-sqlite3", "sqlite-vec", "@anush008/tokenizers", "fastembed"],
  plugins: [vendoredOnnxRuntime],
  // Bundled CommonJS dependencies call require(); give the ESM bundle one.
  banner: {
    js: "import { createRequire as __blctxRequire } from 'node:module'; const require = __blctxRequire(import.meta.url);"
  }
}

// The search fast path reads answers and options with a generated copy of the search schemas
// (it cannot load effect): the build fails while the copy differs from the schemas.
const fresh = fastSearchSchema()
if (JSON.stringify({ answer: SEARCH_ANSWER_SCHEMA, options: SEARCH_OPTION_ROWS }) !== JSON.stringify(fresh)) {
  throw new Error(
    "src/cli/fast-search-schema.ts differs from the search schemas: run node scripts/generate-fast-search-schema.mjs after tsc -p tsconfig.json"
  )
}

// The product: `blctx`, and the stdio MCP server agents launch in every conversation. Split into
// chunks, so what `blctx` imports on demand (everything but `--version`) is a chunk loaded only
// when a command needs it. `blctx search` first loads only the effect-free fast path's chunk, and
// the build fails if anything else slips into what it loads.
// Chunk names carry content hashes: clear the folder so no chunk of an earlier build is packed.
rmSync("dist/bin/chunks", { recursive: true, force: true })
const product = await build({
  ...common,
  splitting: true,
  chunkNames: "chunks/[name]-[hash]",
  metafile: true,
  entryPoints: { blctx: "dist/programs/cli.js", "blctx-mcp": "dist/programs/mcp.js" },
  outdir: "dist/bin"
})
const fastViolations = fastPathViolations(product.metafile, "dist/programs/cli.js")
if (fastViolations.length > 0) {
  throw new Error(
    `dist/bin/blctx.mjs must reach the search fast path through Node builtins, valibot and effect-free modules only; ${fastViolations.join("; ")}`
  )
}
const frontViolations = mcpFrontViolations(product.metafile, "dist/programs/mcp.js")
if (frontViolations.length > 0) {
  throw new Error(
    `dist/bin/blctx-mcp.mjs must answer the MCP handshake through Node builtins and effect-free modules only; ${frontViolations.join("; ")}`
  )
}
// What the MCP server's front answers the handshake with, recorded from the full server itself
// (src/mcp/handshake-derive.ts), so it cannot drift from what the server would say.
writeFileSync(`dist/${HANDSHAKE_TABLE_FILE}`, `${JSON.stringify(await deriveHandshakeTable())}\n`)

// blctxd and its query worker, each one file: a daemon of hundreds of ESM modules held about 50 MiB
// more than the same code bundled (a main thread and a worker, each with its own module graph).
// They keep the `.js` names and places supervisors, the worker pool and tests know them by.
await build({
  ...common,
  entryPoints: { daemon: "dist/programs/blctxd.js", "query-worker": "dist/programs/query-worker-main.js" },
  outExtension: { ".js": ".js" },
  outdir: "dist/programs"
})

// The Codex hook handler, alone: it starts at every prompt, so its graph is Node's builtins,
// valibot and effect-free modules, and the build fails if anything else slips in. CommonJS: an
// ES module entry starts Node's ESM loader, and importing a builtin as an ES module builds its
// facade (node:fs's loads the stream and fs/promises modules), about 40 modules a turn's Stop
// otherwise never loads. blctx-hook.mjs stays for hooks registered before, and runs the same file.
const hook = await build({
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  minify: true,
  sourcemap: true,
  logLevel: "warning",
  metafile: true,
  entryPoints: { "blctx-hook": "dist/programs/hook.js" },
  outExtension: { ".js": ".cjs" },
  outdir: "dist/bin"
})
const violations = hookBundleViolations(hook.metafile)
if (violations.length > 0) {
  throw new Error(
    `dist/bin/blctx-hook.cjs must load only Node builtins, valibot and effect-free modules; it ${violations.join("; ")}`
  )
}
writeFileSync(
  "dist/bin/blctx-hook.mjs",
  '// Hooks registered by an earlier blctx name this file; the handler is blctx-hook.cjs.\nimport "./blctx-hook.cjs"\n'
)

// Test programs, bundled from their sources into a folder the published package leaves out
// (package.json `files`): the CLI with the fake systemd composed in, and the fake manager itself.
await build({
  ...common,
  entryPoints: {
    "cli-fake-systemd": "acceptance/programs/cli-fake-systemd.ts",
    "fake-systemd-manager": "acceptance/programs/fake-systemd-manager.ts"
  },
  outdir: "dist/test-programs"
})

// The daemon with holds composed into its job kinds, and a CLI whose supervisor runs it. The
// daemon keeps the `.js` name supervisors and tests recognise a daemon by.
await build({
  ...common,
  entryPoints: { "cli-held-daemon": "acceptance/programs/cli-held-daemon.ts" },
  outdir: "dist/test-programs"
})
await build({
  ...common,
  entryPoints: { "held-daemon": "acceptance/programs/held-daemon.ts" },
  outExtension: { ".js": ".js" },
  outdir: "dist/test-programs"
})

// The viewer's page (`blctx ui`), served by the daemon from dist/ui/: its browser code in one
// minified file, beside the page and its style sheet. Built from the TypeScript sources, as a
// browser bundle: a Node builtin reached from the page's imports fails the build here.
rmSync("dist/ui", { recursive: true, force: true })
mkdirSync("dist/ui", { recursive: true })
await build({
  bundle: true,
  platform: "browser",
  target: "es2022",
  format: "iife",
  minify: true,
  sourcemap: true,
  logLevel: "warning",
  entryPoints: { app: "src/ui/page/main.ts" },
  outdir: "dist/ui"
})
for (const file of ["index.html", "app.css"]) copyFileSync(`src/ui/page/${file}`, `dist/ui/${file}`)
