import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { Effect, Layer } from "effect"
import {
  CodexAppServer,
  type CodexHooksListing,
  type CodexSkill,
  type CodexSkillsListing
} from "../src/codex/codex-app-server.js"
import { CodexCommandFailed, CodexNotFound } from "../src/codex/codex-cli.js"

/** What the fake app server reports, and the faults a test asks for. */
export interface FakeAppServerState {
  /** False: there is no `codex` on PATH. */
  installed: boolean
  /**
   * A fixed skills listing per Codex home. A home without one is read from disk, as Codex would
   * (`skillsOnDisk`, with the cwd asked as the home: blctx asks with the home), so a skill a step
   * just wrote is listed.
   */
  readonly skills: Map<string, CodexSkillsListing>
  /** Skill files listed as disabled, as `[[skills.config]] path = … enabled = false` in config.toml makes them. */
  readonly disabled: Set<string>
  /** The hooks listing per Codex home (none listed when absent). */
  readonly hooks: Map<string, CodexHooksListing>
  /** Requests that fail, with what Codex says. */
  failing: Partial<Record<"skills" | "hooks", string>>
  /** Every request, as `<codex home>: <method> <cwd>`. */
  readonly calls: Array<string>
}

/** `name:` and `description:` of a SKILL.md's front matter (single-line values, plain or double-quoted). */
const frontMatter = (text: string): { name: string; description: string } | undefined => {
  const match = /^---\n([\s\S]*?)\n---\n/.exec(text)
  if (match === null) return undefined
  const field = (key: string) => {
    const value = new RegExp(`^${key}:\\s*(.*)$`, "m").exec(match[1] ?? "")?.[1]?.trim()
    return value?.startsWith('"') === true ? (JSON.parse(value) as string) : value
  }
  const name = field("name")
  const description = field("description")
  return name === undefined || description === undefined ? undefined : { name, description }
}

/**
 * The user skills Codex would discover in `$CODEX_HOME/skills` and `<home>/.agents/skills`: every
 * `<root>/<dir>/SKILL.md` with front matter naming it, links followed as Codex follows them. A file
 * without front matter is listed among the errors. Disabled paths come from `disabled`.
 */
export const skillsOnDisk = (
  codexHome: string,
  home: string,
  disabled: ReadonlySet<string> = new Set()
): CodexSkillsListing => {
  const skills: Array<CodexSkill> = []
  const errors: Array<{ path: string; message: string }> = []
  for (const root of [NodePath.join(codexHome, "skills"), NodePath.join(home, ".agents", "skills")]) {
    let entries: Array<string> = []
    try {
      entries = Fs.readdirSync(root).sort()
    } catch {
      continue
    }
    for (const entry of entries) {
      if (entry.startsWith(".")) continue
      const path = NodePath.join(root, entry, "SKILL.md")
      let text: string
      try {
        text = Fs.readFileSync(path, "utf8")
      } catch {
        continue
      }
      const parsed = frontMatter(text)
      if (parsed === undefined) {
        errors.push({ path, message: "missing YAML frontmatter delimited by ---" })
        continue
      }
      skills.push({ ...parsed, path, scope: "user", enabled: !disabled.has(path) })
    }
  }
  return { skills, errors }
}

/**
 * An in-memory `codex app-server` for unit tests: listings come from `state` (or, for skills, from
 * the disk), so a test can make a skill disabled, codex missing or a request fail, which the real
 * one cannot be made to do on demand.
 */
export const makeFakeCodexAppServer = (over: Partial<FakeAppServerState> = {}) => {
  const state: FakeAppServerState = {
    installed: true,
    skills: new Map(),
    disabled: new Set(),
    hooks: new Map(),
    failing: {},
    calls: [],
    ...over
  }
  const request = <A>(
    op: "skills" | "hooks",
    codexHome: string,
    cwd: string,
    body: () => A
  ): Effect.Effect<A, CodexNotFound | CodexCommandFailed> =>
    Effect.suspend((): Effect.Effect<A, CodexNotFound | CodexCommandFailed> => {
      const method = `${op}/list`
      state.calls.push(`${codexHome}: ${method} ${cwd}`)
      if (!state.installed) return Effect.fail(new CodexNotFound({ searched: ["/usr/bin", "/bin"] }))
      const reason = state.failing[op]
      if (reason !== undefined) {
        return Effect.fail(new CodexCommandFailed({ command: `codex app-server (${method})`, codexHome, reason }))
      }
      return Effect.sync(body)
    })

  const layer = Layer.succeed(
    CodexAppServer,
    CodexAppServer.of({
      listSkills: (codexHome, cwd) =>
        request(
          "skills",
          codexHome,
          cwd,
          () => state.skills.get(codexHome) ?? skillsOnDisk(codexHome, cwd, state.disabled)
        ),
      listHooks: (codexHome, cwd) =>
        request("hooks", codexHome, cwd, () => state.hooks.get(codexHome) ?? { hooks: [], warnings: [], errors: [] })
    })
  )
  return { state, layer }
}
