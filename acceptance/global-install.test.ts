import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { type DaemonHome, makeDaemonHome, scaled } from "./support/daemon-harness.js"
import { runProcess } from "./support/isolated-home.js"
import { type LocalRegistry, startLocalRegistry } from "./support/local-registry.js"
import { modelData, serveTinyModel, useTinyModel } from "./support/model-server.js"

const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
const pkg = JSON.parse(Fs.readFileSync(NodePath.join(root, "package.json"), "utf8")) as {
  readonly name: string
  readonly version: string
}
/** The real Codex CLI (the @openai/codex dev dependency), first on PATH for `codex mcp add`. */
const codexBin = NodePath.join(root, "node_modules", ".bin")

interface Packed {
  readonly filename: string
  readonly files: ReadonlyArray<{ readonly path: string }>
}

/** Where the one `npm pack` of this file leaves the tarball. */
const packDir = Fs.realpathSync(Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-pack-")))
let packed: Packed | undefined

/** The package as it would be published (built by `npm test` just before), packed once for both tests. */
const packPackage = (): Packed => {
  if (packed !== undefined) return packed
  const [first] = JSON.parse(
    execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", packDir], {
      cwd: root,
      encoding: "utf8"
    })
  ) as ReadonlyArray<Packed>
  if (first === undefined) throw new Error("npm pack printed no package")
  packed = first
  return first
}

afterAll(() => Fs.rmSync(packDir, { recursive: true, force: true }))

/**
 * The compiled modules the product runs: everything the programs' entry points and the `./client`
 * export reach (the entries `scripts/bundle.mjs` bundles, over the compiled tree).
 */
const productModules = async () => {
  const entryPoints = ["cli", "mcp", "blctxd", "query-worker-main", "hook"].map((p) =>
    NodePath.join(root, "dist", "programs", `${p}.js`)
  )
  const graph = await build({
    entryPoints: [...entryPoints, NodePath.join(root, "dist", "src", "rpc", "client.js")],
    absWorkingDir: root,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    packages: "external",
    metafile: true,
    write: false,
    outdir: "unused",
    logLevel: "silent"
  })
  return new Set(Object.keys(graph.metafile.inputs))
}

/** A module `tsc` compiled (not one of the bundles `scripts/bundle.mjs` writes beside them). */
const isCompiledModule = (path: string) =>
  /^dist\/(src|layers|programs)\/.*\.js$/.test(path) && !/^dist\/programs\/(daemon|query-worker)\.js$/.test(path)

/**
 * Compiled modules no product entry reaches that the package still ships, on purpose: the build's
 * import policies, modules of types only, and product code with no caller yet.
 */
const SHIPPED_UNREACHED = new Set([
  "dist/src/capture/hook-import-policy.js",
  "dist/src/cli/fast-path-import-policy.js",
  "dist/src/capture/hook-fs.js",
  "dist/src/transcripts/formats/transcript-format.js",
  "dist/src/domain/agent-cli.js",
  "dist/src/installer/not-implemented.js",
  "dist/layers/onnx-embedder-live.js"
])

/**
 * better-sqlite3's prebuilt addon, packed the way its release host serves it
 * (`prebuild-install`): the test machines cannot reach GitHub, and building it from source takes
 * minutes. The addon is the one `npm ci` installed for this Node.
 */
const servePrebuiltSqlite = (registry: LocalRegistry, workDir: string) => {
  const sqlite = JSON.parse(
    Fs.readFileSync(NodePath.join(root, "node_modules", "better-sqlite3", "package.json"), "utf8")
  ) as { readonly version: string }
  const archive = NodePath.join(workDir, "better-sqlite3-prebuild.tar.gz")
  execFileSync("tar", [
    "czf",
    archive,
    "-C",
    NodePath.join(root, "node_modules", "better-sqlite3"),
    "build/Release/better_sqlite3.node"
  ])
  const name = `better-sqlite3-v${sqlite.version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`
  registry.serveFile(`/prebuilds/v${sqlite.version}/${name}`, Fs.readFileSync(archive))
  return `${registry.url}/prebuilds`
}

/** An executable shell script at `path` (its folder made). */
const writeScript = (path: string, body: string) => {
  Fs.mkdirSync(NodePath.dirname(path), { recursive: true })
  Fs.writeFileSync(path, `#!/bin/sh\n${body}\n`, { mode: 0o755 })
}

/** What a run of `blctx status --json` decided: its exit code and each check's status. */
const outcomeOf = (run: { readonly code: number | null; readonly stdout: string; readonly stderr: string }) => {
  try {
    const report = JSON.parse(run.stdout) as {
      readonly checks: ReadonlyArray<{ readonly id: string; readonly status: string }>
    }
    return { exit_code: run.code, checks: report.checks.map((c) => `${c.id}: ${c.status}`) }
  } catch {
    return { exit_code: run.code, stdout: run.stdout, stderr: run.stderr }
  }
}

describe("the packed package", () => {
  it("carries the programs and nothing of the tests: every compiled module it ships is one the product runs", async () => {
    const files = packPackage().files.map((f) => f.path)
    expect(files).toEqual(
      expect.arrayContaining([
        "package.json",
        "README.md",
        "dist/bin/blctx.mjs",
        "dist/bin/blctx-mcp.mjs",
        "dist/bin/blctx-hook.mjs",
        "dist/programs/daemon.js",
        "skills/base-layer-context/SKILL.md",
        // ONNX Runtime's binding, with its license, in place of onnxruntime-node and its install script.
        "dist/vendor/onnxruntime-node/package.json",
        "dist/vendor/onnxruntime-node/LICENSE",
        "dist/vendor/onnxruntime-node/dist/index.js",
        "dist/vendor/onnxruntime-node/bin/napi-v3/linux/x64/onnxruntime_binding.node",
        "dist/vendor/onnxruntime-node/bin/napi-v3/darwin/arm64/onnxruntime_binding.node"
      ])
    )
    // No test data, test programs or fakes travel with it, whatever their names…
    const unwanted = files.filter((f) =>
      /^(fixtures|acceptance|bench|test-tools|dist\/test-programs|dist\/testing|dist\/bench)\/|\.test\.|test-support|\/fake-|model-test-|model-data/.test(
        f
      )
    )
    expect(unwanted).toEqual([])
    // …and every compiled module it ships is reached from a program or the client: a test helper
    // is reached only from tests.
    const product = await productModules()
    const unreached = files.filter((f) => isCompiledModule(f) && !product.has(f) && !SHIPPED_UNREACHED.has(f))
    expect(unreached).toEqual([])
  })
})

describe("the packed package installed globally, offline", () => {
  let home: DaemonHome | undefined
  let registry: LocalRegistry | undefined
  let work: string | undefined
  afterEach(async () => {
    home?.dispose()
    home = undefined
    await registry?.close()
    registry = undefined
    if (work !== undefined) Fs.rmSync(work, { recursive: true, force: true })
    work = undefined
  })

  it.skipIf(modelData() === undefined)(
    "npm pack, then npm install -g into a fresh prefix: blctx and blctxd work, and blctx install codex ends ready",
    async () => {
      work = Fs.realpathSync(Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-global-")))
      const workDir = work

      const tarball = NodePath.join(packDir, packPackage().filename)

      registry = await startLocalRegistry(root)
      const prebuilds = servePrebuiltSqlite(registry, workDir)
      const prefix = NodePath.join(workDir, "prefix")
      const npmHome = NodePath.join(workDir, "npm-home")
      Fs.mkdirSync(npmHome)
      // A machine with a CUDA toolkit: onnxruntime-node's install script asks `nvcc --version`
      // which CUDA to download providers for.
      const cuda = NodePath.join(workDir, "cuda", "bin")
      writeScript(
        NodePath.join(cuda, "nvcc"),
        'printf "nvcc: NVIDIA (R) Cuda compiler driver\\nCuda compilation tools, release 12.4, V12.4.131\\n"'
      )
      const install = await runProcess(
        "npm",
        [
          "install",
          "--global",
          "--prefix",
          prefix,
          "--registry",
          registry.url,
          "--cache",
          NodePath.join(workDir, "npm-cache"),
          "--no-audit",
          "--no-fund",
          "--no-update-notifier",
          tarball
        ],
        {
          env: {
            PATH: `${cuda}:${process.env.PATH ?? ""}`,
            HOME: npmHome,
            // Stands in for GitHub, where better-sqlite3's install script fetches its prebuilt addon.
            npm_config_better_sqlite3_binary_host: prebuilds
          }
        }
      )
      expect(install.code, `${install.stderr}\nnot in the npm cache: ${registry.missing.join(", ")}`).toBe(0)
      expect(registry.missing).toEqual([])
      console.log(`npm install -g printed:\n${install.stdout}${install.stderr}`)
      // No ONNX Runtime install script ran, so none asked to be reviewed (npm's allowScripts notice).
      expect(install.stdout + install.stderr).not.toContain("onnxruntime")

      const bin = NodePath.join(prefix, "bin")
      const version = await runProcess(NodePath.join(bin, "blctx"), ["--version"], {
        env: { PATH: process.env.PATH ?? "", HOME: npmHome }
      })
      expect(version.code, version.stderr).toBe(0)
      expect(version.stdout).toContain(pkg.version)
      const installed = NodePath.join(prefix, "lib", "node_modules", pkg.name)
      expect(Fs.realpathSync(NodePath.join(bin, "blctxd"))).toBe(
        NodePath.join(installed, "dist", "programs", "daemon.js")
      )

      // blctx install codex from the global command, in an isolated home.
      const data = modelData() as string
      const server = await serveTinyModel(data)
      try {
        const h = makeDaemonHome("detached")
        home = h
        useTinyModel(h, data, server)
        Fs.mkdirSync(h.codexHome, { recursive: true, mode: 0o700 })
        const sessions = NodePath.join(h.codexHome, "sessions", "2026", "02", "02")
        Fs.mkdirSync(sessions, { recursive: true })
        Fs.copyFileSync(
          NodePath.join(root, "fixtures", "history", "session-1.jsonl"),
          NodePath.join(sessions, "rollout-2026-02-02T09-00-00-session-1.jsonl")
        )
        const env = { ...h.env, PATH: `${bin}:${codexBin}:${process.env.PATH ?? ""}` }
        const blctx = (args: ReadonlyArray<string>) => runProcess(NodePath.join(bin, "blctx"), args, { env })

        const run = await blctx(["install", "codex", "--no-hooks", "--json"])
        const report = JSON.parse(run.stdout) as {
          readonly ready: boolean
          readonly exit_code: number
          readonly checks: ReadonlyArray<{ readonly id: string; readonly status: string; readonly detail: string }>
        }
        console.log(`blctx install codex from the global install:\n${JSON.stringify(report, null, 2)}`)
        expect(
          report.checks.filter((c) => c.status !== "passed").map((c) => `${c.id}: ${c.detail}`),
          run.stderr
        ).toEqual([])
        expect(report).toMatchObject({ ready: true, exit_code: 0 })

        // The daemon, the MCP entry and the skill all come from the global install.
        expect(h.processes().some((pid) => Fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(installed))).toBe(
          true
        )
        const mcp = await runProcess("codex", ["mcp", "get", "base-layer-context", "--json"], { env })
        expect(mcp.code, mcp.stderr).toBe(0)
        expect(mcp.stdout).toContain(NodePath.join(installed, "dist", "bin", "blctx-mcp.mjs"))
        expect(Fs.readFileSync(NodePath.join(h.codexHome, "skills", "base-layer-context", "SKILL.md"), "utf8")).toBe(
          Fs.readFileSync(NodePath.join(installed, "skills", "base-layer-context", "SKILL.md"), "utf8")
        )

        // `blctx`, `node …/dist/bin/blctx.mjs` and `npx blctx` are one program. Run from a project
        // whose own node_modules/.bin holds another codex (npx puts that folder first on PATH), all
        // three report the same, and that codex never runs.
        const project = NodePath.join(workDir, "project")
        const decoyRan = NodePath.join(workDir, "decoy-codex-ran")
        writeScript(NodePath.join(project, "node_modules", ".bin", "codex"), `echo "$*" >> '${decoyRan}'; exit 1`)
        Fs.writeFileSync(NodePath.join(project, "package.json"), '{ "name": "project", "private": true }\n')
        const npxEnv = {
          ...env,
          npm_config_prefix: prefix,
          npm_config_cache: NodePath.join(workDir, "npm-cache"),
          npm_config_registry: registry.url,
          npm_config_update_notifier: "false"
        }
        const status = ["status", "codex", "--json"]
        const ways = await Promise.all([
          runProcess(NodePath.join(bin, "blctx"), status, { env, cwd: project }),
          runProcess(process.execPath, [NodePath.join(installed, "dist", "bin", "blctx.mjs"), ...status], {
            env,
            cwd: project
          }),
          runProcess("npx", ["blctx", ...status], { env: npxEnv, cwd: project })
        ])
        const outcomes = ways.map(outcomeOf)
        expect(outcomes[1], "node dist/bin/blctx.mjs").toEqual(outcomes[0])
        expect(outcomes[2], "npx blctx").toEqual(outcomes[0])
        expect(outcomes[0]?.exit_code).toBe(0)
        expect(Fs.existsSync(decoyRan) ? Fs.readFileSync(decoyRan, "utf8") : "").toBe("")

        const uninstall = await blctx(["uninstall", "codex", "--json"])
        expect(uninstall.code, uninstall.stdout).toBe(0)
      } finally {
        await server.close()
      }
    },
    scaled(600_000)
  )
})
