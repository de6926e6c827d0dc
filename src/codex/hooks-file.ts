import { Either, ParseResult, Schema } from "effect"
import type { HookEventName } from "../capture/hook-event.js"

/**
 * `$CODEX_HOME/hooks.json`, where Codex loads command hooks from:
 * `{"hooks": {"<Event>": [{"matcher"?, "hooks": [{"type": "command", "command", "timeout"}]}]}}`.
 * Pure: parsing, judging and editing the document; the step reads and writes the file.
 *
 * The file is shared with the person and other tools, so only what blctx judges is checked and
 * everything else is kept as it was: unknown top-level keys, events, groups, handlers and fields.
 * Claude Code's settings.json holds its hooks in the same shape beside its other settings
 * (`src/claude/settings-file.ts`), so everything here serves that file too.
 */

/** Where Codex reads hook definitions in a Codex home. */
export const codexHooksFile = (codexHome: string) => `${codexHome.replace(/\/+$/, "")}/hooks.json`

/**
 * The timeout (seconds) of each blctx handler. Codex waits this long at most; the handler itself
 * finishes far sooner (prompt recall has a 150 ms deadline), so these only bound a stuck process.
 * SessionEnd matches Codex's own default (1 s), which holds up the exit of Codex.
 */
export const HOOK_TIMEOUTS: Readonly<Record<HookEventName, number>> = {
  SessionStart: 5,
  UserPromptSubmit: 2,
  Stop: 5,
  SessionEnd: 1
}

const mustBe = (what: string) => ({ message: () => `must be ${what}` })
/** Fields blctx does not judge: kept, whatever they hold. */
const Others = Schema.Record({ key: Schema.String, value: Schema.Unknown })

export const HookHandler = Schema.Struct(
  { command: Schema.optional(Schema.String.annotations(mustBe("a string"))) },
  Others
).annotations(mustBe("an object (a hook handler)"))
export type HookHandler = typeof HookHandler.Type

export const HookGroup = Schema.Struct(
  { hooks: Schema.optional(Schema.Array(HookHandler).annotations(mustBe("an array of hook handlers"))) },
  Others
).annotations(mustBe("an object (a hook group)"))
export type HookGroup = typeof HookGroup.Type

export const HooksDocument = Schema.Struct(
  {
    hooks: Schema.optional(
      Schema.Record({
        key: Schema.String,
        value: Schema.Array(HookGroup).annotations(mustBe("an array of hook groups"))
      }).annotations(mustBe("an object mapping event names to arrays of hook groups"))
    )
  },
  Others
).annotations(mustBe("a JSON object"))
export type HooksDocument = typeof HooksDocument.Type

/** One handler blctx owns: the event it is under and the exact command it runs (as the manifest records it). */
export interface HookEntry {
  readonly event: string
  readonly command: string
}

const decode = Schema.decodeUnknownEither(HooksDocument)

const pathOf = (path: ReadonlyArray<PropertyKey>) =>
  path.reduce<string>(
    (text, key) => (typeof key === "number" ? `${text}[${key}]` : text === "" ? String(key) : `${text}.${String(key)}`),
    ""
  )

/**
 * Parses hooks.json (or Claude Code settings.json) text, or says why it is not one (a JSON error,
 * or the first field that is not what `agent` reads there). On success the parsed value itself is
 * returned, not the decoded copy: decoding reorders keys, and a person's file keeps its order
 * through blctx's edits.
 */
export const parseHooksDocument = (text: string, agent = "Codex"): Either.Either<HooksDocument, string> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (e) {
    return Either.left(`it is not valid JSON (${e instanceof Error ? e.message : String(e)})`)
  }
  return Either.match(decode(json), {
    onLeft: (error) => {
      const first = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
      const where = first === undefined || first.path.length === 0 ? "the document" : pathOf(first.path)
      return Either.left(`${where} ${first?.message ?? `is not what ${agent} reads`}`)
    },
    onRight: () => Either.right(json as HooksDocument)
  })
}

/** The text blctx writes: two-space JSON and a final newline. */
export const renderHooksDocument = (doc: HooksDocument): string => `${JSON.stringify(doc, null, 2)}\n`

/** Every handler that has a command, with where it stands (event, group index, handler index). */
export interface LocatedHandler {
  readonly event: string
  readonly group: number
  readonly handler: number
  readonly command: string
}

export const commandHandlers = (doc: HooksDocument): ReadonlyArray<LocatedHandler> =>
  Object.entries(doc.hooks ?? {}).flatMap(([event, groups]) =>
    groups.flatMap((group, g) =>
      (group.hooks ?? []).flatMap((handler, h) =>
        typeof handler.command === "string" ? [{ event, group: g, handler: h, command: handler.command }] : []
      )
    )
  )

/** Whether the document has exactly this command under this event. */
export const hasEntry = (doc: HooksDocument, entry: HookEntry): boolean =>
  (doc.hooks?.[entry.event] ?? []).some((group) => (group.hooks ?? []).some((h) => h.command === entry.command))

/** blctx's group for one entry: one command handler, no matcher (every session, every prompt). */
export const blctxGroup = (entry: HookEntry, timeout: number): HookGroup => ({
  hooks: [{ type: "command", command: entry.command, timeout }]
})

/**
 * Appends one group per entry not already present (same event, same command), after every
 * existing group of its event; everything else stays as it was.
 */
export const addEntries = (
  doc: HooksDocument,
  entries: ReadonlyArray<HookEntry>,
  timeoutOf: (event: string) => number
): HooksDocument => {
  const hooks: Record<string, ReadonlyArray<HookGroup>> = { ...doc.hooks }
  for (const entry of entries) {
    if (hasEntry({ hooks }, entry)) continue
    hooks[entry.event] = [...(hooks[entry.event] ?? []), blctxGroup(entry, timeoutOf(entry.event))]
  }
  return { ...doc, hooks }
}

/**
 * Removes every handler that runs exactly an owned entry's command under its event. A group left
 * without handlers by that is removed, and so is an event left without groups; groups and events
 * that were empty before are not blctx's to tidy and stay.
 */
export const removeEntries = (doc: HooksDocument, entries: ReadonlyArray<HookEntry>): HooksDocument => {
  if (doc.hooks === undefined) return doc
  const owned = (event: string, handler: HookHandler) =>
    entries.some((e) => e.event === event && e.command === handler.command)
  const hooks: Record<string, ReadonlyArray<HookGroup>> = {}
  for (const [event, groups] of Object.entries(doc.hooks)) {
    const kept = groups.flatMap((group): ReadonlyArray<HookGroup> => {
      if (group.hooks === undefined || !group.hooks.some((h) => owned(event, h))) return [group]
      const handlers = group.hooks.filter((h) => !owned(event, h))
      return handlers.length === 0 ? [] : [{ ...group, hooks: handlers }]
    })
    if (kept.length > 0 || groups.length === 0) hooks[event] = kept
  }
  return { ...doc, hooks }
}

/**
 * Reads a command line as `shellWord` writes it (plain words, and single-quoted words with `'\''`
 * for a quote), so the handler path a recorded command runs can be taken back out of it.
 */
export const shellWords = (command: string): ReadonlyArray<string> => {
  const words: Array<string> = []
  let word = ""
  let started = false
  for (let i = 0; i < command.length; i++) {
    const c = command[i] as string
    if (c === "'") {
      const end = command.indexOf("'", i + 1)
      word += command.slice(i + 1, end === -1 ? command.length : end)
      started = true
      i = end === -1 ? command.length : end
    } else if (c === "\\" && i + 1 < command.length) {
      word += command[++i]
      started = true
    } else if (c === " " || c === "\t") {
      if (started) words.push(word)
      word = ""
      started = false
    } else {
      word += c
      started = true
    }
  }
  if (started) words.push(word)
  return words
}

/** A handler that blctx's own hook program would run for this installation, yet not an owned command. */
export interface ModifiedEntry {
  readonly event: string
  readonly command: string
}

/**
 * Handlers that run one of the recorded commands' hook program for this installation (the
 * program's path and the installation id both appear in them) but are not exactly an owned
 * command under that event: someone edited, moved or copied blctx's entry. blctx neither
 * rewrites nor removes them, and says what they run now.
 */
export const modifiedEntries = (
  doc: HooksDocument,
  owned: ReadonlyArray<HookEntry>,
  installationId: string
): ReadonlyArray<ModifiedEntry> => {
  const programs = [
    ...new Set(owned.flatMap((e) => shellWords(e.command).slice(1, 2)).filter((p) => p.startsWith("/")))
  ]
  if (programs.length === 0) return []
  return commandHandlers(doc)
    .filter(
      (h) =>
        !owned.some((e) => e.event === h.event && e.command === h.command) &&
        h.command.includes(installationId) &&
        programs.some((p) => h.command.includes(p) || shellWords(h.command).includes(p))
    )
    .map(({ event, command }) => ({ event, command }))
}

/**
 * Definitions of hooks inline in config.toml (a `[hooks]` table of event arrays, such as
 * `[[hooks.SessionStart]]`), from the parsed TOML: the event names. `[hooks.state.*]` is where
 * Codex keeps trust, not a definition.
 */
export const inlineHookEvents = (config: unknown): ReadonlyArray<string> => {
  if (typeof config !== "object" || config === null || !("hooks" in config)) return []
  const hooks = (config as { readonly hooks: unknown }).hooks
  if (typeof hooks !== "object" || hooks === null) return ["hooks"]
  return Object.keys(hooks).filter((key) => key !== "state")
}
