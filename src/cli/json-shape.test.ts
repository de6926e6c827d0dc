import { describe, expect, it } from "vitest"
import { NO_MATCH, type ShapeSchema, shapeBy } from "./json-shape.js"

const point: ShapeSchema = {
  type: "object",
  required: ["x", "label"],
  properties: {
    x: { type: "integer" },
    label: { anyOf: [{ type: "string", maxLength: 3 }, { type: "null" }] },
    tags: { type: "array", items: { type: "string", enum: ["a", "b"] } }
  }
}

describe("shapeBy", () => {
  it("keeps the schema's properties in its order and drops the others, as decoding does", () => {
    const shaped = shapeBy(point, { extra: true, label: null, tags: ["b"], x: 1 })
    expect(shaped).toEqual({ x: 1, label: null, tags: ["b"] })
    expect(Object.keys(shaped as object)).toEqual(["x", "label", "tags"])
  })

  it.each([
    ["a missing required property", { x: 1 }],
    ["a fraction where an integer is", { x: 1.5, label: null }],
    ["a string over its maxLength", { x: 1, label: "long" }],
    ["a value outside its enum", { x: 1, label: null, tags: ["c"] }],
    ["an array where an object is", [1]],
    ["null where an object is", null]
  ])("refuses %s", (_what, value) => {
    expect(shapeBy(point, value)).toBe(NO_MATCH)
  })
})
