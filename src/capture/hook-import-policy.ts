/**
 * What the hook handler's bundle may contain: its budget is Node's own start-up, and importing
 * `effect` alone adds tens of milliseconds at every prompt. So: no `effect`/`@effect/*`, no
 * native addons, no MCP SDK, and nothing loaded at run time but Node's builtins.
 * scripts/bundle.mjs fails the build on a violation, and a unit test checks the source graph.
 */
export const FORBIDDEN_HOOK_INPUTS: ReadonlyArray<RegExp> = [
  /node_modules\/effect\//,
  /node_modules\/@effect\//,
  /node_modules\/onnxruntime/,
  /node_modules\/better-sqlite3\//,
  /node_modules\/sqlite-vec/,
  /node_modules\/@modelcontextprotocol\//,
  /node_modules\/@anush008\//
]

/** The parts of an esbuild metafile the policy reads. */
export interface BundleMetafile {
  readonly inputs: Readonly<Record<string, unknown>>
  readonly outputs: Readonly<
    Record<string, { readonly imports: ReadonlyArray<{ readonly path: string; readonly external?: boolean }> }>
  >
}

/** Every way the bundle breaks the policy: a forbidden input, or a run-time import other than a builtin. */
export const hookBundleViolations = (metafile: BundleMetafile): ReadonlyArray<string> => [
  ...Object.keys(metafile.inputs)
    .filter((input) => FORBIDDEN_HOOK_INPUTS.some((pattern) => pattern.test(input)))
    .map((input) => `bundles ${input}`),
  ...Object.values(metafile.outputs)
    .flatMap((output) => output.imports)
    .filter((i) => i.external === true && !i.path.startsWith("node:"))
    .map((i) => `imports ${i.path} at run time`)
]
