import { spawn } from "node:child_process"
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
  "sessions",
  "context",
  "notes",
  "forget",
  "export",
  "import-notes",
  "ui",
  "ping"
] as const

/** Root help and every command's. */
const HELP_NAMES = ["--help", ...COMMANDS]
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
  // Each check is its own processes in the shared read-only home: they run side by side.
  it.concurrent.each(HELP_NAMES)("%s: plain text, blctx usage, described options and global flags", async (name) => {
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
      "--source-type SOURCE_TYPE",
      "--agent codex|claude|gemini",
      "--pretty"
    ])
    expect(options.get("context")?.map((e) => e.title)).toEqual([
      "--offset N",
      "--limit N",
      "--char-offset N",
      "--agent codex|claude|gemini",
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
      Persistent, private context for coding agents: blctx indexes your own Codex,
      Claude Code and Gemini CLI transcripts on your own machine and hands that
      history back to the agent, with exact source citations. Nothing leaves the
      machine.

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
        sessions      List your coding sessions
        context       Show the messages around a search or recent result
        notes         List and read the notes agents logged
        forget        Forget part of your history, after a preview
        export        Export your notes and indexed history as JSON lines
        import-notes  Restore notes and their histories from an export
        ui            Open your history in a private page served on this machine
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
        blctx install codex|claude|gemini [--step STEP] [--no-history] [--hooks]
                      [--no-hooks]

      Arguments:
        codex|claude|gemini  The agent to set blctx up for: codex, claude (Claude
                             Code) or gemini (Gemini CLI).

      Options:
        --step STEP          Run only this step, after the steps it needs (its
                             prerequisites). STEP is one of: data_directory,
                             background_service, codex_mcp, codex_skills, claude_mcp,
                             claude_skills, gemini_mcp, gemini_skills,
                             embedding_model, session_discovery, history_index,
                             service_health, mcp_health, history_retrieval,
                             codex_hooks, claude_hooks, gemini_hooks.
        --no-history         Skip the history steps (session_discovery, history_index
                             and history_retrieval): nothing is indexed.
        --hooks              Install the optional agent hooks without asking. Without
                             --hooks or --no-hooks, install asks when run at a
                             terminal and installs them otherwise.
        --no-hooks           Do not install the optional agent hooks; the choice is
                             remembered and the hooks step (codex_hooks, claude_hooks,
                             gemini_hooks) then passes.

      Global flags (before the command or after its arguments):
        --json               Print exactly one JSON document on stdout, errors
                             included (for scripts and agents).
        --no-color           Plain text without colors or animation; also when
                             NO_COLOR is set or stdout is not a terminal.
        -h, --help           Show this help.
      "
    `)
  })

  it("search help (wording is reviewed here)", async () => {
    expect(expectHelp(await blctx(["search", "--help"]))).toMatchInlineSnapshot(`
      "Search your indexed history

      Searches every agent's history (Codex, Claude Code and Gemini CLI) unless
      --agent narrows it. Matches words (BM25) and, once the embedding model has
      embedded every chunk, meaning too; query_mode in the answer says which, and why.
      Every result carries its exact text, its agent and source_type, a context_id for
      blctx context, and its source file with line and byte range. An answer holds at
      most 24,000 characters of text. Searching never imports anything.

      Usage:
        blctx search QUERY... [--limit N] [--offset N] [--project DIR] [--session ID]
                     [--since TIME] [--until TIME] [--source-type SOURCE_TYPE]
                     [--agent codex|claude|gemini] [--pretty]

      Arguments:
        QUERY...       The words to look for; several words form one query (quotes are
                       not needed).

      Options:
        --limit N      How many results to return, 1 to 100. Default: 10.
        --offset N     Skip this many results first, to get the next page (an answer's
                       next_offset says where it continues). Default: 0.
        --project DIR  Only sessions whose working directory is this directory or one
                       below it.
        --session ID   Only this session, by its session id (as results and explore
                       show it).
        --since TIME   Only from this time on (inclusive). TIME is YYYY-MM-DD or
                       YYYY-MM-DDTHH:MM[:SS], optionally ending in Z or ±HH:MM;
                       without an offset it is UTC.
        --until TIME   Only before this time (exclusive). TIME is YYYY-MM-DD or
                       YYYY-MM-DDTHH:MM[:SS], optionally ending in Z or ±HH:MM;
                       without an offset it is UTC.
        --source-type SOURCE_TYPE
                       Only this kind of text: codex_transcript, claude_transcript or
                       gemini_transcript (messages read from your Codex, Claude Code
                       or Gemini CLI transcripts) or authored_update (notes written
                       for blctx rather than read from a transcript). SOURCE_TYPE is
                       one of: codex_transcript, claude_transcript, gemini_transcript,
                       authored_update.
        --agent codex|claude|gemini
                       Only results of this agent: codex, claude (Claude Code) or
                       gemini (Gemini CLI). Notes written for blctx stay unless their
                       session belongs to another agent. Default: every agent.
        --pretty       Print a readable table instead of JSON (the default when stdout
                       is a terminal).

      Global flags (before the command or after its arguments):
        --json         Print exactly one JSON document on stdout, errors included (for
                       scripts and agents).
        --no-color     Plain text without colors or animation; also when NO_COLOR is
                       set or stdout is not a terminal.
        -h, --help     Show this help.
      "
    `)
  })

  it("ui help (wording is reviewed here); a port out of range is a usage error", async () => {
    expect(expectHelp(await blctx(["ui", "--help"]))).toMatchInlineSnapshot(`
      "Open your history in a private page served on this machine

      Search, read, curate and forget your history in a browser. The daemon serves the
      page on 127.0.0.1 only (it is started when needed) until it stops. Prints a
      one-time link, valid ten minutes and used once, and opens it in the browser.
      Prints JSON (url, port, expires_at) unless --pretty or on a terminal.

      Usage:
        blctx ui [--port N] [--no-open] [--pretty]

      Options:
        --port N    The port on 127.0.0.1 the viewer listens on, when it is not
                    running yet; 0 or none lets the system choose one.
        --no-open   Print the link without opening a browser.
        --pretty    Print the link and until when it works, for a person (the default
                    on a terminal).

      Global flags (before the command or after its arguments):
        --json      Print exactly one JSON document on stdout, errors included (for
                    scripts and agents).
        --no-color  Plain text without colors or animation; also when NO_COLOR is set
                    or stdout is not a terminal.
        -h, --help  Show this help.
      "
    `)
    const outOfRange = await blctx(["ui", "--port", "70000", "--no-open"])
    expect(outOfRange.code).toBe(2)
    expect(outOfRange.stderr).toBe("blctx: --port must be between 0 and 65,535 (got 70000)\n")
  })
})

describe("--json is one JSON document", () => {
  it("--version and --help, as well as errors", async () => {
    const [version, rootHelp, plainRoot, statusHelp, plainStatus, exported] = await Promise.all([
      blctx(["--json", "--version"]),
      blctx(["--json", "--help"]),
      blctx(["--help"]),
      blctx(["status", "--help", "--json"]),
      blctx(["status", "--help"]),
      blctx(["export", "--json"])
    ])
    expect(version.code).toBe(0)
    expect(JSON.parse(version.stdout)).toEqual({ version: VERSION })
    expect(JSON.parse(expectHelp(rootHelp))).toEqual({ version: VERSION, help: expectHelp(plainRoot).trimEnd() })
    expect(JSON.parse(expectHelp(statusHelp))).toEqual({ version: VERSION, help: expectHelp(plainStatus).trimEnd() })
    // An export is JSON lines: with --json it is refused, as one JSON error document.
    expect(exported.code).toBe(2)
    expect(JSON.parse(exported.stdout)).toMatchObject({
      error: { _tag: "CliUsageError", message: expect.stringContaining("JSON lines") },
      exit_code: 2
    })
  })
})

describe("usage errors", () => {
  /** The command line, and what its one line on stderr says after `blctx: `. */
  const CASES: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
    [["search", "foo", "--limit", "0"], "--limit must be between 1 and 100 (got 0)"],
    [["search", "foo", "--offset", "-1"], "--offset must be between 0 and 10,000 (got -1)"],
    [["search", "foo", "--limit", "abc"], '--limit must be an integer between 1 and 100 (got "abc")'],
    [["recent", "--days", "-1"], "--days must be greater than 0 and at most 36,500 (got -1)"],
    [["recent", "--limit", "500"], "--limit must be between 1 and 200 (got 500)"],
    [["context", "c1", "--limit", "0"], "--limit must be between 1 and 200 (got 0)"],
    [["notes", "list", "--offset", "-5"], "--offset must be between 0 and 1,000,000 (got -5)"],
    [["recent", "--days", "1", "--since", "2026-01-01"], "--days and --since cannot be used together"],
    [
      ["search", "foo", "--since", "yesterday"],
      '--since must be YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS], optionally ending in Z or ±HH:MM (got "yesterday")'
    ],
    [["search", "foo", "--agent", "bogus"], '--agent must be one of codex, claude, gemini (got "bogus")'],
    [["install", "bogus"], 'install <target> must be one of codex, claude, gemini (got "bogus")'],
    [["context"], "context needs <context-id>"],
    [["notes", "bogus"], 'unknown notes command "bogus"; blctx notes --help lists them'],
    [["--bogus"], 'unknown command "--bogus"; blctx --help lists the commands']
  ]

  it("say on one line what was wrong, naming the argument, once; exit 2 before anything is run", async () => {
    const results = await Promise.all(CASES.map(([args]) => blctx(args)))
    CASES.forEach(([args, message], i) => {
      const result = results[i] as RunResult
      expect({ args, code: result.code, stderr: result.stderr, stdout: result.stdout }).toEqual({
        args,
        code: 2,
        stderr: `blctx: ${message}\n`,
        stdout: ""
      })
    })
  })

  it("with --json: the same line on stderr and one JSON error document on stdout", async () => {
    const results = await Promise.all(CASES.map(([args]) => blctx(["--json", ...args])))
    CASES.forEach(([args, message], i) => {
      const result = results[i] as RunResult
      expect({ args, code: result.code, stderr: result.stderr }).toEqual({
        args,
        code: 2,
        stderr: `blctx: ${message}\n`
      })
      expect(JSON.parse(result.stdout)).toEqual({ error: { _tag: "CliUsageError", message }, exit_code: 2 })
    })
  })
})

describe("what a person reads", () => {
  it("index speaks of every agent's transcripts, and --root of an agent home", async () => {
    const text = flat(expectHelp(await blctx(["index", "--help"])))
    expect(text).not.toMatch(/--root CODEX_HOME|under CODEX_HOME/)
    expect(text).toContain("--root AGENT_HOME")
    expect(text).toContain("Codex, Claude Code and Gemini CLI")
    expect(text).toContain("Claude Code: $CLAUDE_CONFIG_DIR, or ~/.claude")
  })

  it("an unusable HOME (unset, empty, relative) is named with what to do, not an unexpected failure", async () => {
    const todo =
      "blctx finds its files under your home directory: set HOME to it (an absolute path) and run the command again."
    const [unset, relative, json] = await Promise.all([
      blctx(["status", "codex"], { HOME: undefined }),
      blctx(["search", "deploy"], { HOME: "relative/home" }),
      blctx(["--json", "status"], { HOME: "" })
    ])
    expect(unset).toMatchObject({ code: 1, stdout: "", stderr: `blctx: HOME is not set. ${todo}\n` })
    const notUsable = `HOME is not usable: it must be an absolute path. ${todo}`
    expect(relative).toMatchObject({ code: 1, stdout: "", stderr: `blctx: ${notUsable}\n` })
    expect(json.code).toBe(1)
    expect(JSON.parse(json.stdout)).toEqual({ error: { _tag: "EnvironmentInvalid", message: notUsable }, exit_code: 1 })
  })

  it("context --pretty prints its error as text on stderr, nothing on stdout", async () => {
    const [pretty, piped] = await Promise.all([blctx(["context", "c1", "--pretty"]), blctx(["context", "c1"])])
    expect(pretty.code).toBe(1)
    expect(pretty.stdout).toBe("")
    expect(pretty.stderr).toMatch(/^blctx: .*not installed/)
    // Without --pretty, piped output stays JSON, errors included.
    expect(JSON.parse(piped.stdout)).toMatchObject({ error: { _tag: "DaemonUnavailable" }, exit_code: 1 })
  })

  it("status and doctor are titled with the command and agent run", async () => {
    const [statusClaude, doctorClaude, status, json] = await Promise.all([
      blctx(["status", "claude"]),
      blctx(["doctor", "claude"]),
      blctx(["status"]),
      blctx(["status", "claude", "--json"])
    ])
    expect(statusClaude.stdout.split("\n")[0]).toBe("blctx status claude")
    expect(doctorClaude.stdout.split("\n")[0]).toBe("blctx doctor claude")
    // Without an agent, status covers every installed one (Codex when none is).
    expect(status.stdout.split("\n")[0]).toBe("blctx status (Codex)")
    const titles = (JSON.parse(json.stdout) as { checks: ReadonlyArray<{ id: string; title: string }> }).checks
    expect(titles.find((c) => c.id === "session_discovery")?.title).toBe(
      "Session discovery (Codex, Claude Code, Gemini CLI)"
    )
    expect(statusClaude.stdout).not.toContain("codex session discovery")
  })
})

describe("a reader that goes away", () => {
  /** Runs blctx with stdout on a pipe, reads two lines, then closes the pipe as `| head -2` does. */
  const headTwo = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) =>
    new Promise<{ code: number | null; lines: ReadonlyArray<string>; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [bundle, ...args], { env, cwd: "/", stdio: ["ignore", "pipe", "pipe"] })
      let out = ""
      let stderr = ""
      child.stdout.setEncoding("utf8").on("data", (d: string) => {
        out += d
        if (out.split("\n").length > 2) child.stdout.destroy()
      })
      child.stderr.setEncoding("utf8").on("data", (d: string) => {
        stderr += d
      })
      child.on("error", reject)
      child.on("close", (code) => resolve({ code, lines: out.split("\n").slice(0, 2), stderr }))
    })

  it("ends status, doctor and install quietly, exit 141 as a shell reports SIGPIPE", async () => {
    const own = makeIsolatedHome()
    try {
      const env = { ...own.env, NO_COLOR: undefined }
      const round = () =>
        Promise.all([
          headTwo(["status"], env),
          headTwo(["doctor", "claude"], env),
          headTwo(["install", "codex", "--step", "data_directory", "--no-hooks"], env)
        ])
      // Two rounds: whether a command still had lines to write when the pipe closed is a race.
      const runs = [...(await round()), ...(await round())]
      for (const run of runs) {
        expect(run.lines[0]).toMatch(/^blctx (status|doctor|install)/)
        expect(run.stderr).not.toMatch(/EPIPE|Unhandled|\n\s+at /)
        // 141 when it had more to write; else its own verdict (this home is not ready: 1).
        expect([0, 1, 141], JSON.stringify(run)).toContain(run.code)
      }
      // At least one of them still had something to say when the pipe closed.
      expect(runs.some((run) => run.code === 141)).toBe(true)
    } finally {
      own.dispose()
    }
  })
})
