import { FORBIDDEN_HOOK_INPUTS } from "../capture/hook-import-policy.js"

/**
 * What `blctx search` loads before it knows it needs the full CLI: the entry's static imports and
 * the fast path's chunk (`fast-search.ts`, imported dynamically) with its static imports. Like the
 * hook, that graph holds no `effect`/`@effect/*`, native addon or MCP SDK and loads nothing but
 * Node's builtins at run time: the point of the fast path is to skip them. scripts/bundle.mjs
 * fails the build on a violation; programs/cli-fast-bundle.test.ts checks the source graph.
 */

/** The parts of an esbuild metafile (of a `splitting` build) the policy reads. */
export interface SplitMetafile {
  readonly outputs: Readonly<
    Record<
      string,
      {
        readonly entryPoint?: string
        readonly inputs: Readonly<Record<string, unknown>>
        readonly imports: ReadonlyArray<{ readonly path: string; readonly kind: string; readonly external?: boolean }>
      }
    >
  >
}

const FAST_MODULE = /src\/cli\/fast-search\.(js|ts)$/

/** The outputs an entry loads before it needs more: its static closure, plus `first`'s chunk's. */
const closureOutputs = (metafile: SplitMetafile, entryPoint: string, first?: RegExp): ReadonlyArray<string> => {
  const entries = Object.entries(metafile.outputs)
  const entry = entries.find(([, o]) => o.entryPoint === entryPoint)?.[0]
  const firstChunk =
    first === undefined
      ? undefined
      : entries.find(([, o]) => o.entryPoint !== undefined && first.test(o.entryPoint))?.[0]
  const reached = new Set<string>()
  const visit = (path: string) => {
    const output = metafile.outputs[path]
    if (output === undefined || reached.has(path)) return
    reached.add(path)
    for (const i of output.imports) {
      if (i.external === true) continue
      if (i.kind === "import-statement" || (i.kind === "dynamic-import" && i.path === firstChunk)) visit(i.path)
    }
  }
  if (entry !== undefined) visit(entry)
  return [...reached]
}

/** The outputs loaded on the fast path: the entry's static closure, plus the fast chunk's. */
export const fastPathOutputs = (metafile: SplitMetafile, entryPoint: string): ReadonlyArray<string> =>
  closureOutputs(metafile, entryPoint, FAST_MODULE)

/** Every way these outputs break the policy: a forbidden module bundled in, a package loaded at run time. */
const policyViolations = (metafile: SplitMetafile, outputs: ReadonlyArray<string>): ReadonlyArray<string> => [
  ...outputs.flatMap((path) =>
    Object.keys(metafile.outputs[path]?.inputs ?? {})
      .filter((input) => FORBIDDEN_HOOK_INPUTS.some((pattern) => pattern.test(input)))
      .map((input) => `bundles ${input} into ${path}`)
  ),
  ...outputs.flatMap((path) =>
    (metafile.outputs[path]?.imports ?? [])
      .filter((i) => i.external === true && !i.path.startsWith("node:"))
      .map((i) => `${path} imports ${i.path} at run time`)
  )
]

/** Every way the fast path's graph breaks the policy; also when the entry does not reach the fast chunk. */
export const fastPathViolations = (metafile: SplitMetafile, entryPoint: string): ReadonlyArray<string> => {
  const outputs = fastPathOutputs(metafile, entryPoint)
  const reachesFast = outputs.some((path) => {
    const e = metafile.outputs[path]?.entryPoint
    return e !== undefined && FAST_MODULE.test(e)
  })
  return [
    ...(reachesFast ? [] : [`${entryPoint} does not import src/cli/fast-search`]),
    ...policyViolations(metafile, outputs)
  ]
}

/**
 * Every way the MCP server's front (programs/mcp.ts: what loads before it hands over to the full
 * server's chunk) breaks the same policy: it answers the handshake at the cost of a bare Node start.
 */
export const mcpFrontViolations = (metafile: SplitMetafile, entryPoint: string): ReadonlyArray<string> => {
  const outputs = closureOutputs(metafile, entryPoint)
  return outputs.length === 0 ? [`${entryPoint} is not in the build`] : policyViolations(metafile, outputs)
}
