import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type DaemonHome, makeDaemonHome, scaled, waitFor } from "./support/daemon-harness.js"
import { makeIsolatedHome, parseJson } from "./support/isolated-home.js"
import { pathWithCodex } from "./support/real-codex.js"

/**
 * Paths another local user controls never reach blctx: a transcript a hook payload names but
 * another user owns, a root reached through another user's link, an agent home that leads into
 * another user's folder. Handing files and links to another user needs root (CI runs as root);
 * elsewhere these tests are skipped by name.
 */
const isRoot = process.getuid?.() === 0
/** `nobody` on most systems: a real other user id. */
const OTHER_USER = 65_534
const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
const history = NodePath.join(root, "fixtures", "history")

interface Check {
  readonly id: string
  readonly status: string
  readonly detail: string
  readonly remediation?: string
}
const checkIn = (stdout: string, id: string) => {
  const check = parseJson<{ checks: Array<Check> }>({ code: 0, stdout, stderr: "" }).checks.find((c) => c.id === id)
  if (check === undefined) throw new Error(`no ${id} in ${stdout}`)
  return check
}

/** A Codex transcript whose first user message carries `token`, so a search can tell whether it was indexed. */
const transcriptWith = (fixture: string, token: string, path: string) => {
  const text = Fs.readFileSync(NodePath.join(history, fixture), "utf8").replace('"text":"', `"text":"${token} `)
  Fs.writeFileSync(path, text, { mode: 0o644 })
  Fs.chownSync(path, OTHER_USER, OTHER_USER)
}

/** A folder another user owns, as their home would be. */
const theirFolder = (parent: string) => {
  const dir = NodePath.join(parent, "theirs", "codex")
  Fs.mkdirSync(dir, { recursive: true, mode: 0o755 })
  Fs.chownSync(NodePath.dirname(dir), OTHER_USER, OTHER_USER)
  Fs.chownSync(dir, OTHER_USER, OTHER_USER)
  return dir
}

/** A link in sticky /tmp that another user owns (and so could re-point), to `target`. */
const theirLink = (target: string) => {
  const link = NodePath.join(tmpdir(), `blctx-foreign-link-${randomUUID()}`)
  Fs.symlinkSync(target, link)
  Fs.lchownSync(link, OTHER_USER, OTHER_USER)
  return link
}

describe.skipIf(!isRoot)("paths another user controls (as root, with user 65534)", () => {
  let h: DaemonHome
  let stopCommand = ""
  const cleanup: Array<string> = []
  beforeAll(async () => {
    h = makeDaemonHome("detached")
    const base = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
    expect(base.code, base.stdout + base.stderr).toBe(0)
    Fs.mkdirSync(h.codexHome, { recursive: true, mode: 0o700 })
    const hooks = await h.blctx(["install", "codex", "--step", "codex_hooks", "--hooks", "--json"], {
      env: { PATH: pathWithCodex() }
    })
    expect(hooks.code, hooks.stdout + hooks.stderr).toBe(0)
    const registered = JSON.parse(Fs.readFileSync(NodePath.join(h.codexHome, "hooks.json"), "utf8")) as {
      hooks: Record<string, ReadonlyArray<{ hooks: ReadonlyArray<{ command: string }> }>>
    }
    stopCommand = registered.hooks.Stop?.[0]?.hooks[0]?.command ?? ""
    expect(stopCommand).toContain("blctx-hook")
  }, scaled(120_000))
  afterAll(() => {
    for (const path of cleanup) Fs.rmSync(path, { force: true })
    h?.dispose()
  })

  /** As Codex runs the Stop hook: `sh -c COMMAND`, the payload on stdin. */
  const runStop = (session: string, transcriptPath: string) =>
    new Promise<number | null>((resolve, reject) => {
      const child = spawn("/bin/sh", ["-c", stopCommand], { cwd: h.home, stdio: ["pipe", "ignore", "ignore"] })
      child.on("error", reject)
      child.on("close", resolve)
      child.stdin.end(
        JSON.stringify({
          session_id: session,
          turn_id: "turn-1",
          transcript_path: transcriptPath,
          cwd: h.home,
          hook_event_name: "Stop",
          last_assistant_message: "done"
        })
      )
    })

  const searchHits = async (token: string) => {
    const search = await h.blctx(["search", token])
    return ((JSON.parse(search.stdout) as { results?: ReadonlyArray<{ text: string }> }).results ?? []).filter((r) =>
      r.text.includes(token)
    ).length
  }

  it(
    "a Stop payload naming another user's file (in /tmp, or in the sessions folder) is refused, never indexed, and counted",
    async () => {
      const inTmp = NodePath.join(tmpdir(), `rollout-foreign-${randomUUID()}.jsonl`)
      cleanup.push(inTmp)
      transcriptWith("session-2.jsonl", "marmotquartz", inTmp)
      const sessions = NodePath.join(h.codexHome, "sessions", "2026", "02", "05")
      Fs.mkdirSync(sessions, { recursive: true })
      const inRoots = NodePath.join(sessions, "rollout-2026-02-05T09-00-00-theirs.jsonl")
      transcriptWith("session-3.jsonl", "walruszinc", inRoots)

      const codes = await Promise.all([runStop("foreign-session-1", inTmp), runStop("foreign-session-2", inRoots)])
      expect(codes).toEqual([0, 0])

      // Both events drained and judged: nothing left pending.
      const capture = await waitFor(
        "both Stop events to be drained and judged",
        async () => {
          const s = await h.blctx(["index-status"])
          const c = (
            JSON.parse(s.stdout) as {
              capture?: { events: Record<string, number>; pending: number; errors: number; indexed_sessions: number }
            }
          ).capture
          return c !== undefined && c.events.Stop === 2 && c.pending === 0 && c.errors + c.indexed_sessions === 2
            ? c
            : undefined
        },
        60_000
      )
      expect(await searchHits("marmotquartz"), "another user's file in /tmp was indexed").toBe(0)
      expect(await searchHits("walruszinc"), "another user's file in the sessions folder was indexed").toBe(0)
      expect(capture).toMatchObject({ errors: 2, refused: 2, indexed_sessions: 0 })
      const status = await h.blctx(["index-status"])
      const last = (JSON.parse(status.stdout) as { capture: { last_error: string } }).capture.last_error
      expect(last).toMatch(/^refused: /)
      const human = await h.blctx(["index-status", "--pretty"])
      expect(human.stdout + human.stderr).toContain("2 transcript paths refused")
    },
    scaled(120_000)
  )

  it(
    "a CODEX_HOME linking into another user's folder: codex_hooks refuses it as codex_skills does, writing nothing",
    async () => {
      const theirs = theirFolder(h.home)
      const env = { PATH: pathWithCodex(), CODEX_HOME: NodePath.join(h.home, "codex-link") }
      Fs.symlinkSync(theirs, env.CODEX_HOME)
      const [hooks, skills] = await Promise.all([
        h.blctx(["install", "codex", "--step", "codex_hooks", "--hooks", "--json"], { env }),
        h.blctx(["install", "codex", "--step", "codex_skills", "--json"], { env })
      ])
      const hooksCheck = checkIn(hooks.stdout, "codex_hooks")
      const skillsCheck = checkIn(skills.stdout, "codex_skills")
      expect(hooksCheck.status, hooks.stdout).toBe("failed")
      expect(skillsCheck.status, skills.stdout).toBe("failed")
      // One check, one answer: the first folder of theirs on the way, named by both steps.
      expect(hooksCheck.detail).toContain(`${NodePath.dirname(theirs)}, above`)
      expect(skillsCheck.detail).toContain(`${NodePath.dirname(theirs)}, above`)
      expect(hooksCheck.detail).toContain(`owned by user ${OTHER_USER}`)
      expect(Fs.readdirSync(theirs)).toEqual([])
    },
    scaled(120_000)
  )

  it(
    "a CODEX_HOME that is another user's link in sticky /tmp is refused, though it leads to a folder of one's own",
    async () => {
      const mine = NodePath.join(h.home, "codex-mine")
      Fs.mkdirSync(mine, { mode: 0o700 })
      const link = theirLink(mine)
      cleanup.push(link)
      const hooks = await h.blctx(["install", "codex", "--step", "codex_hooks", "--hooks", "--json"], {
        env: { PATH: pathWithCodex(), CODEX_HOME: link }
      })
      const check = checkIn(hooks.stdout, "codex_hooks")
      expect(check.status, hooks.stdout).toBe("failed")
      expect(check.detail).toContain(`${link} is a symbolic link owned by user ${OTHER_USER}`)
      expect(Fs.readdirSync(mine)).toEqual([])
    },
    scaled(120_000)
  )
})

describe.skipIf(!isRoot)("XDG roots another user controls (as root, with user 65534)", () => {
  it("an XDG_DATA_HOME that is another user's link in sticky /tmp is refused, though it leads to a folder of one's own", async () => {
    const h = makeIsolatedHome()
    const mine = NodePath.join(h.home, "data-mine")
    Fs.mkdirSync(mine, { mode: 0o700 })
    const link = theirLink(mine)
    try {
      const install = await h.blctx(["install", "codex", "--step", "data_directory", "--json"], {
        env: { XDG_DATA_HOME: link }
      })
      expect(install.code).toBe(1)
      const check = checkIn(install.stdout, "data_directory")
      expect(check.status).toBe("failed")
      expect(check.detail).toContain(`${link} is a symbolic link owned by user ${OTHER_USER}`)
      expect(check.remediation).toContain(link)
      expect(Fs.readdirSync(mine)).toEqual([])
    } finally {
      Fs.rmSync(link, { force: true })
      h.dispose()
    }
  })
})
