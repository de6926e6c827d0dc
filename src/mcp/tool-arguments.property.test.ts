import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import fc from "fast-check"
import { fuzzParameters } from "../fuzz.test-support.js"
import { MCP_TOOLS } from "./mcp-server.js"

/** Arguments an agent (or anything speaking MCP) might send: any JSON, and objects with the tools' own keys. */
const keys = [...new Set(MCP_TOOLS.flatMap((t) => Object.keys(t.definition.inputSchema.properties ?? {})))]
const argumentsArb = fc.oneof(
  fc.jsonValue({ maxDepth: 5 }),
  fc.dictionary(fc.constantFrom(...keys), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }),
  fc.constant(undefined)
)

describe("MCP tool arguments, arbitrary", () => {
  it("every tool decodes any arguments to a call or an invalid_arguments refusal, never a defect", () => {
    let tried = 0
    let refused = 0
    fc.assert(
      fc.property(fc.constantFrom(...MCP_TOOLS), argumentsArb, (tool, args) => {
        tried++
        const outcome = Effect.runSync(Effect.either(tool.prepare(args)))
        if (Either.isLeft(outcome)) {
          refused++
          expect(outcome.left._tag).toBe("InvalidArguments")
          expect(outcome.left.tool).toBe(tool.definition.name)
        } else expect(typeof outcome.right).toBe("function")
      }),
      fuzzParameters(2_000)
    )
    console.log(
      `MCP tool arguments: ${tried} inputs tried over ${MCP_TOOLS.length} tools, ${refused} refused, no defect`
    )
  })
})
