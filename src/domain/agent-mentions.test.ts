import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import ts from "typescript"
import { describe, expect, it } from "vitest"
import { AGENT_NAMES, type AgentName } from "./agent-names.js"

/**
 * Adding an agent is its record, its transcript format and the modules named after it: no other
 * production file may name an agent (as an identifier or in a string; comments are free), so a
 * list that names agents one by one cannot creep back. A file that must is listed below, with why.
 */
const ROOTS = ["src", "layers", "programs"]
const isProduction = (file: string) =>
  file.endsWith(".ts") && !file.endsWith(".test.ts") && !file.endsWith(".test-support.ts")

const productionFiles = (dir: string): ReadonlyArray<string> =>
  NodeFs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`
    if (entry.isDirectory()) return productionFiles(path)
    return isProduction(path) ? [path] : []
  })

/** The words of a file a reader sees as code: identifiers and the text of string and template literals. */
const codeWords = (file: string): ReadonlyArray<string> => {
  const text = NodeFs.readFileSync(file, "utf8")
  // Most files name no agent anywhere, comments included: no need to parse them.
  if (!AGENT_NAMES.some((agent) => text.toLowerCase().includes(agent))) return []
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false)
  const words: Array<string> = []
  const visit = (node: ts.Node) => {
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) words.push(node.text)
    else if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) words.push(node.text)
    ts.forEachChild(node, visit)
  }
  visit(source)
  return words
}

/**
 * Remediations of the shared steps and the daemon tell a person the whole command to run, and
 * name the first agent as the target (`Run: blctx install codex --step history_index`): the
 * wording is output people and scripts know, so those commands are not counted as naming Codex.
 */
const SHARED_REMEDIATION = new RegExp(`blctx (un)?install ${AGENT_NAMES[0]}\\b`, "g")

const namedAgents = (file: string): ReadonlyArray<AgentName> => {
  const words = codeWords(file).map((w) => w.toLowerCase().replace(SHARED_REMEDIATION, ""))
  return AGENT_NAMES.filter((agent) => words.some((w) => w.includes(agent)))
}

/** An agent's own modules: its folder (src/codex/), its record, CLI port, live layer, format, records and classify modules. */
const ownedBy = (agent: AgentName, file: string) => {
  const base = NodePath.basename(file, ".ts")
  return file.split("/").slice(0, -1).includes(agent) || base === agent || base.startsWith(`${agent}-`)
}

const ALL: ReadonlyArray<AgentName> = AGENT_NAMES

/** Files outside an agent's own modules that name it, and why they must. */
const ALLOWED: Readonly<Record<string, { readonly agents: ReadonlyArray<AgentName>; readonly why: string }>> = {
  "src/domain/agent-names.ts": { agents: ALL, why: "the one declaration of the agents' names" },
  "src/installer/agents/agents.ts": { agents: ALL, why: "collects the installer records (AGENTS): one line an agent" },
  "src/transcripts/formats/registry.ts": {
    agents: ALL,
    why: "collects the transcript formats (TRANSCRIPT_FORMATS): one line an agent"
  },
  "programs/cli-main.ts": {
    agents: ALL,
    why: "the CLI program composes each agent's live CLI layer: one line an agent"
  },
  "src/cli/fast-search-schema.ts": {
    agents: ALL,
    why: "generated at build from the schemas (the fast path's choices), never edited by hand"
  },
  "src/paths/resolve-paths.ts": {
    agents: ALL,
    why: "each agent's home comes from its own variable (PATH_VARIABLES) by its own rule, resolved once for every module"
  },
  "src/ownership/manifest-keys.ts": {
    agents: ["codex"],
    why: "Codex's records predate the naming rule and keep their stored names (hooks_file, choices.hooks)"
  },
  "src/history/history-schema.ts": {
    agents: ["codex"],
    why: "a migration: its SQL stays as it ran (Codex was the only source)"
  },
  "src/history/source-neutral-schema.ts": {
    agents: ["codex"],
    why: "a migration: rows written before agents were recorded were Codex's"
  },
  "src/transcripts/discovery-snapshot.ts": {
    agents: ["codex"],
    why: "the snapshot's stored field codex_home, which snapshots written before `homes` rely on"
  },
  "src/installer/steps/session-discovery.ts": {
    agents: ["codex"],
    why: "reads a snapshot written before `homes`, when Codex was the only format"
  },
  "src/transcripts/classify.ts": {
    agents: ["codex"],
    why: "Codex's classifier, named before other formats had their own (its record rules are codex-records.ts)"
  },
  "src/transcripts/formats/claude-format.ts": {
    agents: ["codex", "gemini"],
    why: "Claude Code's detection defers to the formats whose files it would otherwise also claim"
  },
  "src/installer/agents/agent-integration.ts": {
    agents: ["codex"],
    why: "the hooks document (src/codex/hooks-file.ts) every agent's JSON hooks file shares began as Codex's hooks.json"
  },
  "src/installer/agents/claude.ts": { agents: ["codex"], why: "the shared hooks document (src/codex/hooks-file.ts)" },
  "src/installer/agents/gemini.ts": { agents: ["codex"], why: "the shared hooks document (src/codex/hooks-file.ts)" },
  "src/installer/steps/hooks-step.ts": {
    agents: ["codex"],
    why: "the shared hooks document (src/codex/hooks-file.ts)"
  },
  "src/installer/steps/owned-hooks-file.ts": {
    agents: ["codex"],
    why: "the shared hooks document (src/codex/hooks-file.ts)"
  },
  "src/installer/steps/mcp-health.ts": {
    agents: ["codex", "claude"],
    why: "Codex's and Claude Code's registration readers predate the records' CLI adapters and keep their exact messages; other agents use recordedMcpSource"
  },
  "layers/gemini-cli-live.ts": {
    agents: ["claude"],
    why: "reuses Claude Code's CLI error text (both CLIs report errors the same way)"
  },
  "src/cli/index-paths.ts": { agents: ["codex"], why: "`blctx index --root` reads a Codex home" },
  "src/mcp/tools.ts": { agents: ["codex", "claude"], why: "tool descriptions give two source types as examples" },
  "src/mcp/tool-results.ts": { agents: ["codex"], why: "a field description gives codex_transcript as an example" }
}

const ROOT = NodePath.resolve(import.meta.dirname, "../..")

describe("agent names in production code", () => {
  const files = ROOTS.flatMap((root) => productionFiles(NodePath.join(ROOT, root))).map((f) =>
    NodePath.relative(ROOT, f)
  )

  it("appear only in an agent's own modules and the files listed with a reason", () => {
    const stray = files.flatMap((file) =>
      namedAgents(NodePath.join(ROOT, file))
        .filter((agent) => !ownedBy(agent, file) && !(ALLOWED[file]?.agents.includes(agent) ?? false))
        .map((agent) => `${file} names ${agent}`)
    )
    expect(stray).toEqual([])
  })

  it("lists no file that no longer names the agent it is allowed", () => {
    const stale = Object.entries(ALLOWED).flatMap(([file, { agents }]) => {
      const named = NodeFs.existsSync(NodePath.join(ROOT, file)) ? namedAgents(NodePath.join(ROOT, file)) : []
      return agents.filter((agent) => !named.includes(agent)).map((agent) => `${file} no longer names ${agent}`)
    })
    expect(stale).toEqual([])
  })
})
