import { describe, expect, it } from "@effect/vitest"
import { JSONSchema, Schema } from "effect"
import { SearchRequest, SourceType } from "../retrieval/contract.js"
import { toolJsonSchema } from "./json-schema.js"

const refsIn = (value: unknown): ReadonlyArray<string> => JSON.stringify(value).match(/"\$ref"|"\$defs"|"allOf"/g) ?? []

describe("toolJsonSchema", () => {
  it("is JSONSchema.make of the schema with every reference inlined", () => {
    const generated = JSONSchema.make(SearchRequest) as unknown as {
      $defs: Record<string, unknown>
      properties: Record<string, unknown>
    }
    const tool = toolJsonSchema(SearchRequest) as { type: string; properties: Record<string, Record<string, unknown>> }
    expect(refsIn(generated).length).toBeGreaterThan(0)
    expect(refsIn(tool)).toEqual([])
    expect(tool.type).toBe("object")
    expect(Object.keys(tool.properties)).toEqual(Object.keys(generated.properties))
    // A refinement of a referenced schema keeps its own bounds on top of the definition.
    expect(tool.properties.limit).toMatchObject({ type: "integer", minimum: 1, maximum: 100 })
    // A referenced identifier (SourceType) is replaced by its definition.
    const withSourceType = Schema.Struct({ source_type: SourceType })
    const referenced = JSONSchema.make(withSourceType) as unknown as { $defs: Record<string, unknown> }
    const inlined = toolJsonSchema(withSourceType) as { properties: Record<string, unknown> }
    expect(inlined.properties.source_type).toEqual(referenced.$defs.SourceType)
  })

  it("turns a top-level reference (a Schema.Class) into the object itself", () => {
    class Point extends Schema.Class<Point>("Point")({ x: Schema.Int, y: Schema.Int }) {}
    expect(toolJsonSchema(Point)).toMatchObject({
      type: "object",
      required: ["x", "y"],
      properties: { x: { type: "integer" }, y: { type: "integer" } }
    })
  })

  it("refuses a schema that is not an object, and a recursive one", () => {
    expect(() => toolJsonSchema(Schema.String)).toThrow("must describe an object")
    interface Tree {
      readonly children: ReadonlyArray<Tree>
    }
    const Tree: Schema.Schema<Tree> = Schema.Struct({
      children: Schema.Array(Schema.suspend((): Schema.Schema<Tree> => Tree))
    }).annotations({ identifier: "Tree" })
    expect(() => toolJsonSchema(Tree)).toThrow("recursive")
  })
})
