// Copies ONNX Runtime's Node binding (its JavaScript and its CPU binaries for Linux and macOS) into
// dist/vendor/onnxruntime-node, where the bundled programs load it (`#onnxruntime` in package.json
// "imports"). The package ships this copy instead of depending on onnxruntime-node, whose install
// script downloads CUDA providers on Linux x64 (from GitHub, failing offline) and which a global
// install cannot switch off: `npm install -g blctx` reads no allowScripts or .npmrc of ours. The
// CPU binaries are in onnxruntime-node's own tarball, so the script adds nothing blctx uses.
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as NodePath from "node:path"

const require = createRequire(import.meta.url)
const source = NodePath.dirname(require.resolve("onnxruntime-node/package.json"))
const target = NodePath.join("dist", "vendor", "onnxruntime-node")
const { version, license } = JSON.parse(Fs.readFileSync(NodePath.join(source, "package.json"), "utf8"))

/** The platforms blctx runs on (README: Linux or macOS). */
const PLATFORMS = ["linux/x64", "linux/arm64", "darwin/x64", "darwin/arm64"]

/**
 * On Linux the binding links `libonnxruntime.so.1`; npm tarballs hold no symbolic links, so
 * onnxruntime-node carries the same library a second time under its full version, unused.
 */
const isUnusedCopy = (name) => name === `libonnxruntime.so.${version}`

/** Copies a file unless the target already holds one of the same size and age (rebuilds stay quick). */
const copyFile = (from, to) => {
  const before = Fs.statSync(from)
  const after = Fs.statSync(to, { throwIfNoEntry: false })
  if (after?.size === before.size && after.mtimeMs === before.mtimeMs) return
  Fs.mkdirSync(NodePath.dirname(to), { recursive: true })
  Fs.copyFileSync(from, to)
  Fs.utimesSync(to, before.atime, before.mtime)
}

const copyScripts = () => {
  const dist = NodePath.join(source, "dist")
  for (const name of Fs.readdirSync(dist).filter((n) => n.endsWith(".js"))) {
    copyFile(NodePath.join(dist, name), NodePath.join(target, "dist", name))
  }
}

const copyBinaries = () => {
  for (const platform of PLATFORMS) {
    const folder = NodePath.join("bin", "napi-v3", platform)
    for (const name of Fs.readdirSync(NodePath.join(source, folder)).filter((n) => !isUnusedCopy(n))) {
      copyFile(NodePath.join(source, folder, name), NodePath.join(target, folder, name))
    }
  }
}

/** A manifest with no scripts and no dependencies: the binding's files are CommonJS in an ESM package. */
const writeManifest = () => {
  const manifest = {
    name: "onnxruntime-node",
    version,
    license,
    private: true,
    type: "commonjs",
    main: "dist/index.js"
  }
  Fs.writeFileSync(NodePath.join(target, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`)
  Fs.writeFileSync(
    NodePath.join(target, "LICENSE"),
    `ONNX Runtime ${version} Node.js binding (onnxruntime-node), copied unchanged from its npm package.

MIT License

Copyright (c) Microsoft Corporation

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
`
  )
}

copyScripts()
copyBinaries()
writeManifest()
