/**
 * A value checked against a JSON Schema generated from an effect Schema (`fast-search-schema.ts`),
 * without loading effect: the search fast path reads the daemon's answer with the schema the
 * daemon encodes it with, not with a copy. Only the keywords `JSONSchema.make` writes for answers
 * are understood (`SHAPE_KEYWORDS`); the generator refuses a schema with any other. Like decoding
 * and encoding with the effect Schema, an object keeps only the schema's properties, in the
 * schema's order, so the fast path prints byte for byte what the full CLI prints.
 */

/** The part of a JSON Schema this module reads. */
export interface ShapeSchema {
  readonly type?: "object" | "array" | "string" | "number" | "integer" | "boolean" | "null"
  readonly properties?: Readonly<Record<string, ShapeSchema>>
  readonly required?: ReadonlyArray<string>
  readonly additionalProperties?: boolean
  readonly items?: ShapeSchema
  readonly anyOf?: ReadonlyArray<ShapeSchema>
  readonly enum?: ReadonlyArray<string | number | boolean | null>
  readonly maxLength?: number
}

/** The keywords `ShapeSchema` understands. */
export const SHAPE_KEYWORDS: ReadonlyArray<string> = [
  "type",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "anyOf",
  "enum",
  "maxLength"
]

/** What a value that does not match is shaped into. */
export const NO_MATCH: unique symbol = Symbol("no match")

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Whether `value` has the schema's primitive `type` (objects and arrays are shaped below). */
const hasType = (type: ShapeSchema["type"], value: unknown): boolean => {
  switch (type) {
    case undefined:
      return true
    case "string":
      return typeof value === "string"
    case "number":
      return typeof value === "number" && Number.isFinite(value)
    case "integer":
      return typeof value === "number" && Number.isInteger(value)
    case "boolean":
      return typeof value === "boolean"
    case "null":
      return value === null
    case "object":
      return isRecord(value)
    case "array":
      return Array.isArray(value)
  }
}

/** The object with the schema's properties only, in its order, each shaped; NO_MATCH if one fails. */
const shapeObject = (schema: ShapeSchema, value: Readonly<Record<string, unknown>>) => {
  const out: Record<string, unknown> = {}
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    if (!Object.hasOwn(value, key)) {
      if (schema.required?.includes(key) === true) return NO_MATCH
      continue
    }
    const shaped = shapeBy(property, value[key])
    if (shaped === NO_MATCH) return NO_MATCH
    out[key] = shaped
  }
  return out
}

/** `value` as the schema shapes it, or NO_MATCH when it does not match the schema. */
export const shapeBy = (schema: ShapeSchema, value: unknown): unknown => {
  if (schema.anyOf !== undefined) {
    for (const option of schema.anyOf) {
      const shaped = shapeBy(option, value)
      if (shaped !== NO_MATCH) return shaped
    }
    return NO_MATCH
  }
  if (!hasType(schema.type, value)) return NO_MATCH
  if (schema.enum !== undefined && !schema.enum.includes(value as string)) return NO_MATCH
  if (typeof value === "string" && schema.maxLength !== undefined && value.length > schema.maxLength) {
    return NO_MATCH
  }
  if (Array.isArray(value)) {
    const items = schema.items
    if (items === undefined) return value
    const shaped = value.map((item) => shapeBy(items, item))
    return shaped.includes(NO_MATCH) ? NO_MATCH : shaped
  }
  return isRecord(value) && schema.properties !== undefined ? shapeObject(schema, value) : value
}
