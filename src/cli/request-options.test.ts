import * as NodePath from "node:path"
import { CliConfig, Command, ValidationError } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { BoundedPath } from "../domain/bounded-text.js"
import { described } from "../domain/field-description.js"
import { boundedWithFallback } from "../domain/read-bounds-schema.js"
import { SearchRequest } from "../retrieval/contract.js"
import { docText } from "./help.js"
import { AGENT_FIELD, requestArgument, requestOptions } from "./request-options.js"
import { SEARCH_FIELDS, SearchOptionsRequest } from "./search-fields.js"

/** What a command with these options received, or the usage error it failed with. */
const received = <A>(request: ReturnType<typeof requestOptions<A, unknown>>, args: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    let got: A | undefined
    const probe = Command.make("probe", { request }, (o) => Effect.sync(() => (got = o.request)))
    const exit = yield* Command.run(probe, { name: "probe", version: "0" })(["node", "probe", ...args]).pipe(
      Effect.either
    )
    if (exit._tag === "Right") return got
    return ValidationError.isValidationError(exit.left) ? docText(exit.left.error) : String(exit.left)
  }).pipe(Effect.provide(NodeContext.layer))

describe("requestOptions", () => {
  it.effect("decodes a command line into the request, defaults filled in by the schema", () =>
    Effect.gen(function* () {
      const options = requestOptions(SearchOptionsRequest, SEARCH_FIELDS)
      expect(yield* received(options, [])).toEqual({ limit: 10, offset: 0, filters: {} })
      expect(
        yield* received(options, ["--limit", "5", "--source-type", "authored_update", "--project", "/srv"])
      ).toEqual({ limit: 5, offset: 0, filters: { project: "/srv", source_type: "authored_update" } })
      // The bound comes from the schema, the message from the option.
      expect(yield* received(options, ["--limit", "0"])).toBe("--limit must be between 1 and 100 (got 0)")
      // What the options accept but the request does not carry is refused naming the option.
      expect(yield* received(options, ["--project", "x".repeat(5_000)])).toMatch(/^--project /)
    })
  )

  it("refuses a request field without an option, and an option without a description", () => {
    expect(() => requestOptions(SearchRequest, SEARCH_FIELDS)).toThrow(
      "the request field query has no command-line option"
    )
    const undescribed = Schema.Struct({ limit: boundedWithFallback({ min: 1, max: 5, fallback: 1 }) })
    expect(() => requestOptions(undescribed, { limit: {} })).toThrow("the request field limit has no description")
  })

  it("names a field in backquotes as its option", () => {
    const request = Schema.Struct({
      project: Schema.optional(described(BoundedPath, "Only here. Not with `agent`.")),
      agent: Schema.optional(described(BoundedPath, "Whose."))
    })
    const probe = Command.make("probe", { request: requestOptions(request, { project: {}, agent: AGENT_FIELD }) })
    const help = docText(Command.getHelp(probe, CliConfig.defaultConfig))
    expect(help).toContain("Only here. Not with --agent.")
  })
})

describe("a command's own wording and paths", () => {
  const Selector = Schema.Struct({
    note: Schema.optional(described(BoundedPath, "A note, as agents are told.")),
    file: Schema.optional(
      described(
        BoundedPath.pipe(Schema.pattern(/^\//, { message: () => "must be an absolute path" })),
        "A file, as agents are told."
      )
    )
  })

  it("shows the command's help for a field where it words it for its own action", () => {
    const options = requestOptions(Selector, {
      note: { pseudo: "NOTE_ID", help: "Forget one note." },
      file: { pseudo: "PATH", absolute: true }
    })
    const help = docText(Command.getHelp(Command.make("probe", { options }), CliConfig.defaultConfig))
    expect(help).toContain("Forget one note.")
    expect(help).not.toContain("A note, as agents are told.")
    expect(help).toContain("A file, as agents are told.")
  })

  it.effect("makes a path absolute against the working directory before the schema decodes it", () =>
    Effect.gen(function* () {
      const options = requestOptions(Selector, { note: {}, file: { absolute: true } })
      expect(yield* received(options, ["--file", "some/where"])).toEqual({ file: NodePath.resolve("some/where") })
      expect(yield* received(options, ["--note", "n"])).toEqual({ note: "n" })
    })
  )

  it.effect("decodes a positional argument into the request, refused in the command's words", () =>
    Effect.gen(function* () {
      const Request = Schema.Struct({ note_id: described(Schema.UUID, "The note.") })
      const argument = requestArgument(Request, "note_id", {
        help: "The note's id.",
        refused: (text) => `note id ${JSON.stringify(text)} is not a UUID`
      })
      let got: unknown
      const probe = Command.make("probe", { argument }, (o) => Effect.sync(() => (got = o.argument)))
      const run = (args: ReadonlyArray<string>) =>
        Command.run(probe, { name: "probe", version: "0" })(["node", "probe", ...args]).pipe(
          Effect.either,
          Effect.provide(NodeContext.layer)
        )
      const id = "0b7d3f0e-6a4e-4f55-9c0e-3f1f7a2b9c11"
      expect((yield* run([id]))._tag).toBe("Right")
      expect(got).toEqual({ note_id: id })
      const refused = yield* run(["nope"])
      expect(refused._tag === "Left" && ValidationError.isValidationError(refused.left)).toBe(true)
      if (refused._tag === "Left" && ValidationError.isValidationError(refused.left)) {
        expect(docText(refused.left.error)).toBe('note id "nope" is not a UUID')
      }
    })
  )
})
