import { JSONSchema, type Schema } from "effect"

/** A JSON Schema as plain data (what `tools/list` sends). */
export type JsonObject = { readonly [key: string]: unknown }

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const DEFINITIONS = "#/$defs/"

/**
 * A tool's JSON Schema, generated from the effect/Schema the daemon decodes with
 * (`JSONSchema.make`, draft-07, the encoded side: what a caller sends or receives), then made
 * self-contained: every `$ref` to `$defs` is replaced by its definition (the referring node's own
 * keywords, such as a refinement's bounds, kept on top) and an `allOf` of one schema is merged
 * into its parent. MCP clients hand these schemas to models; not all of them resolve references
 * (a client that drops an unresolved `$ref` would see `limit` as an untyped value), and an
 * inlined schema reads the same to every validator.
 */
export const toolJsonSchema = <A, I, R>(schema: Schema.Schema<A, I, R>): JsonObject => {
  const { $defs, ...root } = JSONSchema.make(schema) as unknown as JsonObject & { readonly $defs?: JsonObject }
  const definitions: JsonObject = $defs ?? {}
  const inlined = inline(root, definitions, [])
  if (!isObject(inlined) || inlined.type !== "object") {
    throw new Error(`a tool schema must describe an object, got ${JSON.stringify(inlined).slice(0, 200)}`)
  }
  return inlined
}

const inline = (node: unknown, definitions: JsonObject, resolving: ReadonlyArray<string>): unknown => {
  if (Array.isArray(node)) return node.map((item) => inline(item, definitions, resolving))
  if (!isObject(node)) return node
  const { $ref, allOf, ...rest } = node
  let out: Record<string, unknown> = {}
  if (typeof $ref === "string") {
    if (!$ref.startsWith(DEFINITIONS)) throw new Error(`unsupported reference ${$ref}`)
    const name = $ref.slice(DEFINITIONS.length)
    // The request and response schemas are not recursive; a cycle would be a new kind of schema.
    if (resolving.includes(name)) throw new Error(`recursive schema ${name} cannot be inlined`)
    const target = definitions[name]
    if (!isObject(target)) throw new Error(`no definition for ${$ref}`)
    out = { ...(inline(target, definitions, [...resolving, name]) as JsonObject) }
  }
  if (Array.isArray(allOf) && allOf.length === 1) {
    out = { ...out, ...(inline(allOf[0], definitions, resolving) as JsonObject) }
  } else if (allOf !== undefined) {
    out.allOf = inline(allOf, definitions, resolving)
  }
  for (const [key, value] of Object.entries(rest)) out[key] = inline(value, definitions, resolving)
  return out
}
