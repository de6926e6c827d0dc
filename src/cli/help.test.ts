import { Args, Command, Options } from "@effect/cli"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { ansiStyle, plainStyle } from "../installer/render-text.js"
import { commandDescription, commandNames, findHelpTopic, renderCommandHelp, renderRootHelp, wrapText } from "./help.js"

const sample = Command.make(
  "sample",
  {
    target: Args.choice([["codex", "codex"]] as const, { name: "target" }).pipe(Args.withDescription("The agent.")),
    files: Args.text({ name: "file" }).pipe(Args.withDescription("Files to read."), Args.repeated),
    kind: Options.choice("kind", ["a", "b", "c", "d"]).pipe(Options.withDescription("Which kind."), Options.optional),
    mode: Options.choice("mode", ["fast", "slow"]).pipe(Options.withDescription("How fast."), Options.optional),
    limit: Options.integer("limit").pipe(
      Options.withPseudoName("N"),
      Options.withDescription("How many. Default: 5."),
      Options.withDefault(5)
    ),
    label: Options.text("label").pipe(Options.withDescription("A label."), Options.optional),
    flag: Options.boolean("flag").pipe(Options.withDescription("Turn it on."))
  },
  () => Effect.void
).pipe(Command.withDescription(commandDescription("Do a sample thing", "In more detail.")))

const root = Command.make("blctx").pipe(Command.withDescription("The root."), Command.withSubcommands([sample]))

describe("findHelpTopic", () => {
  const names = ["install", "search"]

  it("finds -h and --help anywhere before --", () => {
    expect(findHelpTopic(["--help"], names)).toEqual({ _tag: "Root" })
    expect(findHelpTopic(["search", "foo", "-h"], names)).toEqual({ _tag: "Command", name: "search" })
    expect(findHelpTopic(["install", "--help", "codex"], names)).toEqual({ _tag: "Command", name: "install" })
    expect(findHelpTopic(["search", "--", "--help"], names)).toBeUndefined()
    expect(findHelpTopic(["search", "foo"], names)).toBeUndefined()
  })

  it("treats no arguments as a request for the root help", () => {
    expect(findHelpTopic([], names)).toEqual({ _tag: "Root" })
  })

  it("names a command it does not know", () => {
    expect(findHelpTopic(["bogus", "--help"], names)).toEqual({ _tag: "UnknownCommand", name: "bogus" })
  })
})

describe("wrapText", () => {
  it("wraps at the width and keeps long words whole", () => {
    expect(wrapText("one two three four", 9)).toEqual(["one two", "three", "four"])
    expect(wrapText("a verylongword b", 4)).toEqual(["a", "verylongword", "b"])
  })
})

describe("renderCommandHelp", () => {
  const text = renderCommandHelp(sample.descriptor, plainStyle)

  it("starts usage lines with blctx, arguments before options, and uses placeholders", () => {
    expect(text).toContain("  blctx sample codex FILE... [--kind KIND] [--mode fast|slow] [--limit N]")
    expect(text).toContain("[--label LABEL] [--flag]")
  })

  it("drops the library's boilerplate and built-in options but keeps every description", () => {
    expect(text).not.toMatch(/true or false|An integer|user-defined|This setting|may be repeated|One of the following/)
    expect(text).not.toMatch(/--wizard|--completions|--log-level/)
    for (const words of ["The agent.", "Files to read.", "Which kind.", "How fast.", "How many.", "A label."]) {
      expect(text).toContain(words)
    }
    expect(text).toContain("KIND is one of: a, b, c, d.")
  })

  it("lists the global flags", () => {
    expect(text).toMatch(/^ {2}--json {2,}\S/m)
    expect(text).toMatch(/^ {2}--no-color {2,}\S/m)
    expect(text).toMatch(/^ {2}-h, --help {2,}\S/m)
  })

  it("is plain text without colors, and styles only headings and titles with them", () => {
    expect(text).not.toContain("\u001b")
    const styled = renderCommandHelp(sample.descriptor, ansiStyle)
    expect(styled).toContain("\u001b[1mUsage:\u001b[22m")
    expect(styled.split("\u001b[1m").join("").split("\u001b[22m").join("")).toBe(text)
  })

  it("keeps every line within 80 columns unless a single word is longer", () => {
    for (const line of text.split("\n")) expect(line.length).toBeLessThanOrEqual(80)
  })
})

describe("renderRootHelp", () => {
  it("lists each command with the first paragraph of its description", () => {
    const text = renderRootHelp(root.descriptor, [sample.descriptor], "9.9.9", plainStyle)
    expect(text).toMatch(/^blctx 9\.9\.9\nThe root\./)
    expect(text).toMatch(/^ {2}sample {2,}Do a sample thing$/m)
    expect(text).not.toContain("In more detail.")
    expect(text).toMatch(/^ {2}--version {2,}\S/m)
    expect(commandNames([sample.descriptor])).toEqual(["sample"])
  })
})

describe("renderCommandHelp of a command with subcommands", () => {
  const child = (name: string) =>
    Command.make(
      name,
      {
        id: Args.text({ name: "item-id" }).pipe(Args.withDescription("The item.")),
        verbose: Options.boolean("verbose").pipe(Options.withDescription("Say more."))
      },
      () => Effect.void
    ).pipe(Command.withDescription(`The ${name} subcommand.`))
  const parent = Command.make("items", {}, () => Effect.void).pipe(
    Command.withDescription(commandDescription("Work with items")),
    Command.withSubcommands([child("show"), child("drop")])
  )
  const text = renderCommandHelp(parent.descriptor, plainStyle)

  it("names its subcommands in the usage and lists each with its arguments and description", () => {
    expect(text).toContain("Usage:\n  blctx items drop|show ...")
    expect(text).toMatch(/^ {2}items drop ITEM_ID {2,}The drop subcommand\.$/m)
    expect(text).toMatch(/^ {2}items show ITEM_ID {2,}The show subcommand\.$/m)
  })

  it("describes the subcommands' options once, under Options", () => {
    expect(text.match(/^ {2}--verbose {2,}Say more\.$/gm)).toHaveLength(1)
  })
})
