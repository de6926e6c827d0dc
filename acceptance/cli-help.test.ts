import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { VERSION } from "../src/version.js"
import { type IsolatedHome, makeIsolatedHome, type RunResult, runProcess } from "./support/isolated-home.js"

const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
/** The bundle `npm run build` produces: what `blctx` on a PATH runs. */
const bundle = NodePath.join(root, "dist", "bin", "blctx.mjs")

const COMMANDS = [
  "install",
  "status",
  "doctor",
  "uninstall",
  "explore",
  "index",
  "index-status",
  "search",
  "recent",
  "context",
  "notes",
  "forget",
  "export",
  "import-notes",
  "ping"
] as const

const ESC = "\u001b"

let home: IsolatedHome
beforeAll(() => {
  home = makeIsolatedHome()
})
afterAll(() => home.dispose())

/** The built CLI with stdout piped; NO_COLOR is unset unless the test sets it. */
const blctx = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}) =>
  runProcess(process.execPath, [bundle, ...args], { env: { ...home.env, NO_COLOR: undefined, ...env } })

/** The built CLI on a pseudo-terminal (`script`), so stdout is a TTY. */
const onTerminal = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}) =>
  runProcess("script", ["-qfec", [process.execPath, bundle, ...args].join(" "), "/dev/null"], {
    env: { ...home.env, NO_COLOR: undefined, TERM: "xterm", ...env }
  })

interface Entry {
  readonly title: string
  readonly description: string
}

/** The entries under a heading: a title two spaces in, its description after two or more spaces or below. */
const entries = (text: string, heading: string): ReadonlyArray<Entry> => {
  const lines = text.split("\n")
  const start = lines.findIndex((line) => line.startsWith(heading))
  if (start === -1) return []
  const found: Array<{ title: string; description: string }> = []
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === "") break
    const head = /^ {2}(\S.*?)(?: {2,}(\S.*))?$/.exec(line)
    const last = found.at(-1)
    if (head !== null) found.push({ title: head[1] ?? "", description: head[2] ?? "" })
    else if (last !== undefined) last.description = `${last.description} ${line.trim()}`.trim()
  }
  return found
}

/** Words as a person reads them, whatever the line breaks. */
const flat = (text: string) => text.replace(/\s+/g, " ")

const usageLine = (text: string) => {
  const lines = text.split("\n")
  return lines[lines.indexOf("Usage:") + 1]?.trim()
}

const expectHelp = (result: RunResult) => {
  expect(result.code, result.stderr).toBe(0)
  expect(result.stderr).toBe("")
  return result.stdout
}

describe("help for people", () => {
  it.each(["--help", ...COMMANDS])("%s: plain text, blctx usage, described options and global flags", async (name) => {
    const args = name === "--help" ? ["--help"] : [name, "--help"]
    const piped = expectHelp(await blctx(args))
    expect(piped).not.toContain(ESC)
    expect(expectHelp(await blctx(["--no-color", ...args]))).toBe(piped)
    expect(expectHelp(await blctx(args, { NO_COLOR: "1" }))).toBe(piped)

    expect(usageLine(piped)).toMatch(name === "--help" ? /^blctx COMMAND/ : new RegExp(`^blctx ${name}( |$)`))
    const global = entries(piped, "Global flags")
    expect(global.map((e) => e.title)).toEqual(expect.arrayContaining(["--json", "--no-color", "-h, --help"]))
    const listed = ["Options:", "Arguments:", "Commands:"].flatMap((heading) => entries(piped, heading))
    for (const entry of [...global, ...listed]) {
      expect(entry.description, `${name}: ${entry.title}`).not.toBe("")
    }
    for (const boilerplate of [
      "--wizard",
      "--completions",
      "--log-level",
      "A true or false value",
      "A user-defined piece of text",
      "This setting is optional",
      "One of the following"
    ]) {
      expect(piped).not.toContain(boilerplate)
    }
  })

  it("every option of every command has its own description", async () => {
    const options = new Map<string, ReadonlyArray<Entry>>()
    for (const name of COMMANDS) options.set(name, entries(expectHelp(await blctx([name, "--help"])), "Options:"))
    expect(options.get("search")?.map((e) => e.title)).toEqual([
      "--limit N",
      "--offset N",
      "--project DIR",
      "--session ID",
      "--since TIME",
      "--until TIME",
      "--source-type codex_transcript|claude_transcript|authored_update",
      "--agent codex|claude",
      "--pretty"
    ])
    expect(options.get("context")?.map((e) => e.title)).toEqual([
      "--offset N",
      "--limit N",
      "--char-offset N",
      "--agent codex|claude",
      "--pretty"
    ])
    const since = options.get("search")?.find((e) => e.title.startsWith("--since"))?.description
    expect(since).toMatch(/inclusive/)
    expect(since).toMatch(/UTC/)
    expect(options.get("recent")?.find((e) => e.title.startsWith("--until"))?.description).toMatch(/exclusive/)
    expect(options.get("search")?.find((e) => e.title === "--limit N")?.description).toMatch(/Default: 10/)
  })

  it("status, doctor and uninstall speak for themselves, not with install's words", async () => {
    const install = expectHelp(await blctx(["install", "--help"]))
    const status = expectHelp(await blctx(["status", "--help"]))
    const doctor = expectHelp(await blctx(["doctor", "--help"]))
    const uninstall = expectHelp(await blctx(["uninstall", "--help"]))
    const step = (text: string) => entries(text, "Options:").find((e) => e.title.startsWith("--step"))?.description
    const target = (text: string) => entries(text, "Arguments:")[0]?.description
    for (const text of [status, doctor]) {
      expect(text).not.toContain("install also runs its prerequisites")
      expect(text).not.toContain("What to set up")
      expect(step(text)).not.toBe(step(install))
      expect(target(text)).not.toBe(target(install))
      expect(flat(text)).toMatch(/never changes anything|without changing anything/)
    }
    expect(step(status)).not.toBe(step(doctor))
    expect(flat(doctor)).toMatch(/remediation/)
    expect(flat(uninstall)).toMatch(/kept unless --purge/)
  })

  it("is styled only on a terminal without --no-color or NO_COLOR", async () => {
    const styled = await onTerminal(["search", "--help"])
    expect(styled.code).toBe(0)
    expect(styled.stdout).toContain(`${ESC}[1mUsage:`)
    expect((await onTerminal(["search", "--help"], { NO_COLOR: "" })).stdout).toContain(ESC)
    expect((await onTerminal(["--no-color", "search", "--help"])).stdout).not.toContain(ESC)
    expect((await onTerminal(["search", "--help"], { NO_COLOR: "1" })).stdout).not.toContain(ESC)
  })

  it("-h, a bare blctx and --version answer with exit 0; an unknown command is a usage error", async () => {
    const help = expectHelp(await blctx(["--help"]))
    expect(expectHelp(await blctx(["-h"]))).toBe(help)
    expect(expectHelp(await blctx([]))).toBe(help)
    expect(expectHelp(await blctx(["search", "-h"]))).toBe(expectHelp(await blctx(["search", "--help"])))
    expect(expectHelp(await blctx(["status", "--help", "--json"]))).toBe(expectHelp(await blctx(["status", "--help"])))
    expect(expectHelp(await blctx(["--version"])).trim()).toBe(VERSION)

    const unknown = await blctx(["bogus", "--help"])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("bogus")
    const json = await blctx(["--json", "bogus", "--help"])
    expect(json.code).toBe(2)
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { _tag: "CliUsageError" }, exit_code: 2 })
  })

  it("root help (wording is reviewed here)", async () => {
    expect(expectHelp(await blctx(["--help"])).replace(VERSION, "VERSION")).toMatchInlineSnapshot(`
      "blctx VERSION
      Persistent, private context for coding agents: blctx indexes your own Codex
      transcripts on your own machine and hands that history back to the agent, with
      exact source citations. Nothing leaves the machine.

      Usage:
        blctx COMMAND [ARGUMENTS] [OPTIONS]

      Commands:
        install       Set up blctx for an agent and verify it, step by step
        status        Check what install set up, without changing anything
        doctor        Diagnose what is wrong, with a fix for every failure
        uninstall     Stop blctx for an agent and remove what install set up
        explore       Look at your transcripts and what blctx would index (read-only)
        index         Index transcripts into your searchable history
        index-status  Show what the index covers, or the state of one job
        search        Search your indexed history
        recent        Show the most recent turns of your coding sessions
        context       Show the messages around a search or recent result
        notes         List and read the notes agents logged
        forget        Forget part of your history, after a preview
        export        Export your notes and indexed history as JSON lines
        import-notes  Restore notes and their histories from an export
        ping          Check that the blctx daemon answers, starting it when needed

      Global flags (before the command or after its arguments):
        --json        Print exactly one JSON document on stdout, errors included (for
                      scripts and agents).
        --no-color    Plain text without colors or animation; also when NO_COLOR is
                      set or stdout is not a terminal.
        -h, --help    Show this list; blctx COMMAND --help shows one command's help.
        --version     Print the version of blctx.

      Run blctx COMMAND --help for a command's arguments and options.
      "
    `)
  })

  it("install help (wording is reviewed here)", async () => {
    expect(expectHelp(await blctx(["install", "--help"]))).toMatchInlineSnapshot(`
      "Set up blctx for an agent and verify it, step by step

      Runs an ordered checklist (private data directory, daemon, MCP server, skill,
      embedding model, history index, optional hooks) and verifies every step after it
      runs. A step whose prerequisite did not pass is blocked. Exit 0 when every
      selected step passed, 1 otherwise.

      Usage:
        blctx install codex|claude [--step STEP] [--no-history] [--hooks] [--no-hooks]

      Arguments:
        codex|claude  The agent to set blctx up for: codex or claude (Claude Code).

      Options:
        --step STEP   Run only this step, after the steps it needs (its
                      prerequisites). STEP is one of: data_directory,
                      background_service, codex_mcp, codex_skills, claude_mcp,
                      claude_skills, embedding_model, session_discovery,
                      history_index, service_health, mcp_health, history_retrieval,
                      codex_hooks, claude_hooks.
        --no-history  Skip the history steps (session_discovery, history_index and
                      history_retrieval): nothing is indexed.
        --hooks       Install the optional agent hooks without asking. Without --hooks
                      or --no-hooks, install asks when run at a terminal and installs
                      them otherwise.
        --no-hooks    Do not install the optional agent hooks; the choice is
                      remembered and the hooks step (codex_hooks, claude_hooks) then
                      passes.

      Global flags (before the command or after its arguments):
        --json        Print exactly one JSON document on stdout, errors included (for
                      scripts and agents).
        --no-color    Plain text without colors or animation; also when NO_COLOR is
                      set or stdout is not a terminal.
        -h, --help    Show this help.
      "
    `)
  })

  it("search help (wording is reviewed here)", async () => {
    expect(expectHelp(await blctx(["search", "--help"]))).toMatchInlineSnapshot(`
      "Search your indexed history

      Searches every agent's history (Codex and Claude Code) unless --agent narrows
      it. Matches words (BM25) and, once the embedding model has embedded every chunk,
      meaning too; query_mode in the answer says which, and why. Every result carries
      its exact text, its agent and source_type, a context_id for blctx context, and
      its source file with line and byte range. An answer holds at most 24,000
      characters of text. Searching never imports anything.

      Usage:
        blctx search QUERY... [--limit N] [--offset N] [--project DIR] [--session ID]
                     [--since TIME] [--until TIME]
                     [--source-type codex_transcript|claude_transcript|authored_update]
                     [--agent codex|claude] [--pretty]

      Arguments:
        QUERY...              The words to look for; several words form one query
                              (quotes are not needed).

      Options:
        --limit N             How many results to return, 1 to 100. Default: 10.
        --offset N            Skip this many results first, to get the next page (an
                              answer's next_offset says where it continues). Default:
                              0.
        --project DIR         Only sessions whose working directory is DIR or a
                              directory below it.
        --session ID          Only this session, by its session id (as results and
                              explore show it).
        --since TIME          Only from this time on (inclusive). TIME is YYYY-MM-DD
                              or YYYY-MM-DDTHH:MM[:SS], optionally ending in Z or
                              ±HH:MM; without an offset it is UTC.
        --until TIME          Only before this time (exclusive). TIME is YYYY-MM-DD or
                              YYYY-MM-DDTHH:MM[:SS], optionally ending in Z or ±HH:MM;
                              without an offset it is UTC.
        --source-type codex_transcript|claude_transcript|authored_update
                              Only this kind of text: codex_transcript or
                              claude_transcript (messages read from your Codex or
                              Claude Code transcripts) or authored_update (notes
                              written for blctx rather than read from a transcript).
        --agent codex|claude  Only results of this agent: codex (Codex) or claude
                              (Claude Code). Notes written for blctx stay unless their
                              session belongs to another agent. Default: every agent.
        --pretty              Print a readable table instead of JSON (the default when
                              stdout is a terminal).

      Global flags (before the command or after its arguments):
        --json                Print exactly one JSON document on stdout, errors
                              included (for scripts and agents).
        --no-color            Plain text without colors or animation; also when
                              NO_COLOR is set or stdout is not a terminal.
        -h, --help            Show this help.
      "
    `)
  })
})
