import { CliConfig, CommandDescriptor, HelpDoc, type Span, type Usage } from "@effect/cli"
import { HashMap, HashSet, Option } from "effect"
import type { Style } from "../installer/render-text.js"

/**
 * blctx's own help screens. @effect/cli's built-in help always carries ANSI escapes, prints
 * usage lines without the program name, lists its own built-in options (--wizard, --completions,
 * --log-level) and describes every option's type in its own words ("A true or false value.").
 * So blctx reads what the library knows about each command (its usage tree and help document,
 * without built-ins) and lays it out itself: plain text, or styled only when colors are on.
 */

/** What `--help` (or a bare `blctx`) asked for, found before @effect/cli parses anything. */
export type HelpTopic =
  | { readonly _tag: "Root" }
  | { readonly _tag: "Command"; readonly name: string }
  | { readonly _tag: "UnknownCommand"; readonly name: string }

/**
 * `-h`/`--help` anywhere before a `--` separator, or no arguments at all. The command is the
 * first argument that is not a flag: the root takes no options of its own, so a command name
 * always comes first.
 */
export const findHelpTopic = (
  args: ReadonlyArray<string>,
  commandNames: ReadonlyArray<string>
): HelpTopic | undefined => {
  const separator = args.indexOf("--")
  const before = separator === -1 ? args : args.slice(0, separator)
  const asked = args.length === 0 || before.some((arg) => arg === "--help" || arg === "-h")
  if (!asked) return undefined
  const first = before.find((arg) => !arg.startsWith("-"))
  if (first === undefined) return { _tag: "Root" }
  return commandNames.includes(first) ? { _tag: "Command", name: first } : { _tag: "UnknownCommand", name: first }
}

/** A command's description: a one-line summary (listed by `blctx --help`), then details. */
export const commandDescription = (summary: string, ...details: ReadonlyArray<string>): HelpDoc.HelpDoc =>
  HelpDoc.blocks([HelpDoc.p(summary), ...details.map((d) => HelpDoc.p(d))])

type Descriptor = CommandDescriptor.Command<unknown>

/** Built-in options stay out of what blctx reads (and out of anything the library prints). */
export const helpCliConfig: CliConfig.CliConfig = CliConfig.make({ showBuiltIns: false })

const WIDTH = 80
const INDENT = 2
const GAP = 2
/** Titles longer than this get a line of their own, with the description below. */
const MAX_TITLE = 22
/** Up to this many choices are written out in a usage line; more become a placeholder. */
const INLINE_CHOICES = 3

interface Entry {
  readonly title: string
  readonly description: ReadonlyArray<string>
}

interface CommandHelp {
  readonly name: string
  readonly description: ReadonlyArray<string>
  readonly usage: ReadonlyArray<string>
  readonly arguments: ReadonlyArray<Entry>
  readonly options: ReadonlyArray<Entry>
  /** Subcommands (`blctx notes list`), each titled with its arguments. */
  readonly commands: ReadonlyArray<Entry>
}

// ---- reading the library's data ---------------------------------------------------------------

const spanText = (span: Span.Span): string => {
  switch (span._tag) {
    case "Text":
    case "URI":
      return span.value
    case "Sequence":
      return spanText(span.left) + spanText(span.right)
    case "Highlight":
    case "Strong":
    case "Weak":
      return spanText(span.value)
  }
}

const blocks = (doc: HelpDoc.HelpDoc): ReadonlyArray<HelpDoc.HelpDoc> =>
  doc._tag === "Sequence" ? [...blocks(doc.left), ...blocks(doc.right)] : doc._tag === "Empty" ? [] : [doc]

const paragraphs = (doc: HelpDoc.HelpDoc): ReadonlyArray<string> =>
  blocks(doc).flatMap((block) => {
    switch (block._tag) {
      case "Paragraph":
      case "Header":
        return [spanText(block.value)]
      case "Enumeration":
        return block.elements.flatMap(paragraphs)
      case "DescriptionList":
        return block.definitions.flatMap(([title, body]) => [spanText(title), ...paragraphs(body)])
      default:
        return []
    }
  })

/** A help document (a validation error's message) as one line of plain text. */
export const docText = (doc: HelpDoc.HelpDoc): string => paragraphs(doc).join(" ").replace(/\s+/g, " ").trim()

/** A usage element: the command's name, an argument or an option, as written in a usage line. */
interface Element {
  readonly kind: "command" | "argument" | "option"
  /** `--limit` or `<path>`: how the library names it in its help document. */
  readonly key: string
  /** As it stands in the usage line, `[--limit N]`. */
  readonly text: string
  /** As an entry's title, `--limit N`. */
  readonly title: string
}

const concatenated = (usage: Usage.Usage): ReadonlyArray<Usage.Usage> =>
  usage._tag === "Concat"
    ? [...concatenated(usage.left), ...concatenated(usage.right)]
    : usage._tag === "Empty"
      ? []
      : [usage]

const firstName = (usage: Usage.Usage): string | undefined => {
  switch (usage._tag) {
    case "Named":
      return usage.names[0]
    case "Optional":
    case "Repeated":
      return firstName(usage.usage)
    case "Alternation":
    case "Concat":
      return firstName(usage.left) ?? firstName(usage.right)
    default:
      return undefined
  }
}

/** The library's names for value types: shown as a placeholder derived from the name instead. */
const TYPE_NAMES = new Set(["boolean", "choice", "date", "float", "integer", "path", "file", "directory", "text"])
const placeholder = (name: string) =>
  name
    .replace(/^-+|^<|>$/g, "")
    .replace(/-/g, "_")
    .toUpperCase()

/** The value a named option or argument takes: choices, its pseudo-name, or a placeholder. */
const valueText = (name: string, accepted: Option.Option<string>): string | undefined => {
  if (Option.isNone(accepted)) return undefined
  const choices = accepted.value.split(" | ")
  if (choices.length > 1) return choices.length <= INLINE_CHOICES ? choices.join("|") : placeholder(name)
  if (TYPE_NAMES.has(accepted.value)) return placeholder(name)
  return accepted.value
}

const usageText = (usage: Usage.Usage): string => {
  switch (usage._tag) {
    case "Empty":
      return ""
    case "Mixed":
      return "COMMAND"
    case "Named": {
      const name = usage.names[0] ?? ""
      if (name.startsWith("-")) {
        const value = valueText(name, usage.acceptedValues)
        return value === undefined ? name : `${name} ${value}`
      }
      // An argument (`<path>`): its placeholder, or a single choice as the word itself (`install codex`).
      return name.startsWith("<") ? (valueText(name, usage.acceptedValues) ?? placeholder(name)) : name
    }
    case "Optional":
      return `[${usageText(usage.usage)}]`
    case "Repeated":
      return `${usageText(usage.usage)}...`
    case "Alternation":
      return `${usageText(usage.left)} | ${usageText(usage.right)}`
    case "Concat":
      return [usageText(usage.left), usageText(usage.right)].filter((s) => s !== "").join(" ")
  }
}

const elements = (usage: Usage.Usage): ReadonlyArray<Element> =>
  concatenated(usage).map((part) => {
    const key = firstName(part) ?? ""
    const kind = key.startsWith("-") ? "option" : key.startsWith("<") ? "argument" : "command"
    const text = usageText(part)
    const title = part._tag === "Optional" ? usageText(part.usage) : text
    return { kind, key, text, title }
  })

/** Paragraphs the library adds to every entry: the value's type and whether it is optional. */
const LIBRARY_PARAGRAPHS = [
  /^A true or false value\.$/,
  /^An integer\.$/,
  /^A floating point number\.$/,
  /^A user-defined piece of text( that is confidential)?\.$/,
  /^A date without a time-zone/,
  /^An? (existing )?(file|directory|file or directory)( that must not exist)?\.$/,
  /^This setting is optional\.$/,
  /^This (argument|option) may be repeated zero or more times\.$/
]

/** The library's entry text without its boilerplate; choices the title hides are listed last. */
const entryDescription = (title: string, texts: ReadonlyArray<string>): ReadonlyArray<string> => {
  const kept: Array<string> = []
  const last: Array<string> = []
  for (const text of texts) {
    if (LIBRARY_PARAGRAPHS.some((re) => re.test(text))) continue
    const fallback = /^This setting is optional\. Defaults to: (.*)$/.exec(text)
    const choice = /^One of the following: (.*)$/.exec(text)
    if (fallback !== null) last.push(`Default: ${fallback[1]}.`)
    else if (choice !== null) {
      const values = (choice[1] ?? "").split(", ")
      if (values.length > 1 && !title.includes(values.join("|"))) {
        last.push(`${title.split(" ").at(-1)} is one of: ${values.join(", ")}.`)
      }
    } else kept.push(text)
  }
  return [...kept, ...last]
}

/** The key an entry's title has in the library's help document: `--limit` or `<path>`. */
const entryKey = (title: string) => /^\(?(-[^\s,)]+|<[^>]+>)/.exec(title)?.[1] ?? title

const descriptorName = (descriptor: Descriptor) => [...HashSet.values(CommandDescriptor.getNames(descriptor))][0] ?? ""

/** Everything a command's help screen says, read from its descriptor. */
const readCommand = (descriptor: Descriptor): CommandHelp => {
  const parts = elements(CommandDescriptor.getUsage(descriptor))
  const byKey = new Map(parts.map((part) => [part.key, part]))
  const sections = new Map<string, Array<HelpDoc.HelpDoc>>()
  let section = ""
  for (const block of blocks(CommandDescriptor.getHelp(descriptor, helpCliConfig))) {
    if (block._tag === "Header") section = spanText(block.value)
    else sections.set(section, [...(sections.get(section) ?? []), block])
  }
  const entries = (name: string): ReadonlyArray<Entry> =>
    (sections.get(name) ?? []).flatMap((block) =>
      block._tag === "DescriptionList"
        ? block.definitions.map(([span, body]): Entry => {
            const key = entryKey(spanText(span))
            const title = byKey.get(key)?.title ?? spanText(span)
            return { title, description: entryDescription(title, paragraphs(body)) }
          })
        : []
    )
  const name = descriptorName(descriptor)
  // A command with subcommands (`blctx notes list|show|history`): each is listed with its usage,
  // and their options are the command's options.
  const children = subcommandsOf(descriptor).map(readCommand)
  // Arguments first, as people write them: `blctx install codex [--step STEP]`.
  const usage = [
    "blctx",
    name,
    ...(children.length > 0 ? [`${children.map((c) => c.name).join("|")} ...`] : []),
    ...parts.filter((p) => p.kind === "argument").map((p) => p.text),
    ...parts.filter((p) => p.kind === "option").map((p) => p.text)
  ]
  const childOptions = children.flatMap((c) => c.options)
  return {
    name,
    description: (sections.get("DESCRIPTION") ?? []).flatMap(paragraphs),
    usage,
    arguments: entries("ARGUMENTS"),
    options: [
      ...entries("OPTIONS"),
      ...childOptions.filter((o, i) => childOptions.findIndex((p) => p.title === o.title) === i)
    ],
    // Titled with their arguments; their options are listed under Options.
    commands: children.map((c) => ({
      title: [name, ...c.usage.slice(1).filter((t) => !t.startsWith("-") && !t.startsWith("[-"))].join(" "),
      description: c.description
    }))
  }
}

/** A command's own subcommands, by name (the library lists a command without any as its own). */
const subcommandsOf = (descriptor: Descriptor): ReadonlyArray<Descriptor> => {
  const name = descriptorName(descriptor)
  return [...HashMap.entries(CommandDescriptor.getSubcommands(descriptor))]
    .filter(([key]) => key !== name)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, child]) => child)
}

// ---- layout ---------------------------------------------------------------------------------

/** Greedy word wrap; a word longer than the width stands on its own line. */
export const wrapText = (text: string, width: number): ReadonlyArray<string> => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    if (line === "") line = word
    else if (line.length + 1 + word.length <= width) line = `${line} ${word}`
    else {
      lines.push(line)
      line = word
    }
  }
  if (line !== "") lines.push(line)
  return lines
}

const usageLines = (tokens: ReadonlyArray<string>): ReadonlyArray<string> => {
  const lead = tokens.slice(0, 2).join(" ")
  const hanging = " ".repeat(INDENT + lead.length + 1)
  const lines: Array<string> = []
  let line = `${" ".repeat(INDENT)}${lead}`
  for (const token of tokens.slice(2)) {
    if (line.length + 1 + token.length <= WIDTH || line.trim() === lead) line = `${line} ${token}`
    else {
      lines.push(line)
      line = `${hanging}${token}`
    }
  }
  lines.push(line)
  return lines
}

const table = (entries: ReadonlyArray<Entry>, column: number, style: Style): ReadonlyArray<string> =>
  entries.flatMap((entry) => {
    const text = wrapText(entry.description.join(" "), WIDTH - column)
    const pad = " ".repeat(column)
    const head = `${" ".repeat(INDENT)}${style.bold(entry.title)}`
    const width = INDENT + entry.title.length
    if (width + GAP <= column && text.length > 0) {
      const [first, ...rest] = text
      return [`${head}${" ".repeat(column - width)}${first}`, ...rest.map((l) => `${pad}${l}`)]
    }
    return [head, ...text.map((l) => `${pad}${l}`)]
  })

const columnFor = (entries: ReadonlyArray<Entry>) =>
  INDENT + entries.reduce((max, e) => (e.title.length <= MAX_TITLE ? Math.max(max, e.title.length) : max), 0) + GAP

const section = (heading: string, lines: ReadonlyArray<string>, style: Style) =>
  lines.length === 0 ? [] : ["", style.bold(`${heading}:`), ...lines]

const paragraphLines = (texts: ReadonlyArray<string>) =>
  texts.flatMap((text, i) => [...(i > 0 ? [""] : []), ...wrapText(text, WIDTH)])

const GLOBAL_FLAGS: ReadonlyArray<Entry> = [
  {
    title: "--json",
    description: ["Print exactly one JSON document on stdout, errors included (for scripts and agents)."]
  },
  {
    title: "--no-color",
    description: ["Plain text without colors or animation; also when NO_COLOR is set or stdout is not a terminal."]
  }
]

const rootFlags: ReadonlyArray<Entry> = [
  ...GLOBAL_FLAGS,
  { title: "-h, --help", description: ["Show this list; blctx COMMAND --help shows one command's help."] },
  { title: "--version", description: ["Print the version of blctx."] }
]
const commandFlags: ReadonlyArray<Entry> = [...GLOBAL_FLAGS, { title: "-h, --help", description: ["Show this help."] }]

const GLOBAL_HEADING = "Global flags (before the command or after its arguments)"

/** `blctx COMMAND --help`. */
export const renderCommandHelp = (descriptor: Descriptor, style: Style): string => {
  const help = readCommand(descriptor)
  const column = columnFor([...help.commands, ...help.arguments, ...help.options, ...commandFlags])
  return [
    ...paragraphLines(help.description),
    ...section("Usage", usageLines(help.usage), style),
    ...section("Commands", table(help.commands, column, style), style),
    ...section("Arguments", table(help.arguments, column, style), style),
    ...section("Options", table(help.options, column, style), style),
    ...section(GLOBAL_HEADING, table(commandFlags, column, style), style)
  ].join("\n")
}

/** `blctx --help`, and `blctx` alone. */
export const renderRootHelp = (
  root: Descriptor,
  commands: ReadonlyArray<Descriptor>,
  version: string,
  style: Style
): string => {
  const listed = commands.map((command): Entry => {
    const help = readCommand(command)
    return { title: help.name, description: help.description.slice(0, 1) }
  })
  const column = columnFor([...listed, ...rootFlags])
  return [
    style.bold(`blctx ${version}`),
    ...paragraphLines(readCommand(root).description),
    ...section("Usage", [`${" ".repeat(INDENT)}blctx COMMAND [ARGUMENTS] [OPTIONS]`], style),
    ...section("Commands", table(listed, column, style), style),
    ...section(GLOBAL_HEADING, table(rootFlags, column, style), style),
    "",
    "Run blctx COMMAND --help for a command's arguments and options."
  ].join("\n")
}

/** The unwrapped `Named` usage of an optional or repeated element. */
const namedOf = (usage: Usage.Usage): Extract<Usage.Usage, { _tag: "Named" }> | undefined =>
  usage._tag === "Named"
    ? usage
    : usage._tag === "Optional" || usage._tag === "Repeated"
      ? namedOf(usage.usage)
      : undefined

/** A command's arguments that take one of several values (`<target>`: codex, claude), for usage errors. */
export const argumentChoices = (
  descriptor: Descriptor
): ReadonlyArray<{ readonly name: string; readonly choices: ReadonlyArray<string> }> =>
  concatenated(CommandDescriptor.getUsage(descriptor)).flatMap((part) => {
    const named = namedOf(part)
    const name = named?.names[0] ?? ""
    if (named === undefined || !name.startsWith("<") || Option.isNone(named.acceptedValues)) return []
    const choices = named.acceptedValues.value.split(" | ")
    return choices.length > 1 ? [{ name, choices }] : []
  })

/** The names `findHelpTopic` accepts as commands. */
export const commandNames = (commands: ReadonlyArray<Descriptor>): ReadonlyArray<string> => commands.map(descriptorName)
