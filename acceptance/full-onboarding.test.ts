import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { type DaemonHome, makeDaemonHome, scaled } from "./support/daemon-harness.js"
import { check, historyFixtures, placeSession, type Report, reportRun } from "./support/installer-report.js"
import { builtProgram, runProcess } from "./support/isolated-home.js"
import { type ModelServer, modelData, serveTinyModel, useTinyModel } from "./support/model-server.js"
import { pathWithCodex } from "./support/real-codex.js"
import { runAtTerminal, screenOf, shellLine } from "./support/terminal.js"

/**
 * Full onboarding, green: in an isolated home with the real `codex`, the detached supervisor and
 * the tiny model served from loopback, `blctx install codex` runs every step in order and ends
 * ready; status and doctor agree; uninstall turns status red; a reinstall at a real terminal is
 * green with the same installation id; `--purge` removes only what blctx owns.
 */

/** The checklist of `blctx install codex`, in the order the installer runs and shows it. */
const CODEX_STEPS = [
  "data_directory",
  "background_service",
  "codex_mcp",
  "codex_skills",
  "embedding_model",
  "session_discovery",
  "history_index",
  "service_health",
  "mcp_health",
  "history_retrieval",
  "codex_hooks"
]

/** Without a TTY and without --hooks/--no-hooks the hooks are installed; Codex then waits for the person to trust them. */
const PENDING_TRUST = /; approve on next Codex launch: open \/hooks and trust the blctx hooks \(0 of 4 trusted; /

let home: DaemonHome | undefined
let server: ModelServer | undefined
afterEach(async () => {
  home?.dispose()
  home = undefined
  await server?.close()
  server = undefined
})

const data = modelData()

/** The installer runs with the real codex first on PATH: codex_mcp and codex_hooks ask it. */
const withCodex = (): NodeJS.ProcessEnv => ({ PATH: pathWithCodex() })

/** What the real Codex holds under blctx's MCP server name (exit 1 when nothing). */
const codexMcpGet = (h: DaemonHome) =>
  runProcess("codex", ["mcp", "get", "base-layer-context", "--json"], { env: { ...h.env, ...withCodex() } })

/** Runs an installer command with `--json`, prints its report in the test log and returns it. */
const logged = async (h: DaemonHome, args: ReadonlyArray<string>) => {
  const run = await reportRun(h, args, withCodex())
  console.log(`blctx ${args.join(" ")} --json (exit ${run.code}):\n${JSON.stringify(run.report, null, 2)}`)
  return run
}

const ids = (r: Report) => r.checks.map((c) => c.id)
const statuses = (r: Report) => r.checks.map((c) => [c.id, c.status])
/** Every check that did not pass, with what it said: empty when everything is green. */
const notPassed = (r: Report) => r.checks.filter((c) => c.status !== "passed").map((c) => `${c.id}: ${c.detail}`)

const expectGreen = ({ code, report }: { readonly code: number | null; readonly report: Report }) => {
  expect(ids(report)).toEqual(CODEX_STEPS)
  expect(notPassed(report)).toEqual([])
  expect(report).toMatchObject({ ready: true, exit_code: 0 })
  expect(code).toBe(0)
}

/** Every file under `dir` with its bytes, so a later snapshot shows anything changed, added or gone. */
const snapshot = (dir: string): ReadonlyMap<string, Buffer> =>
  new Map(
    Fs.readdirSync(dir, { recursive: true, encoding: "utf8" })
      .map((name) => NodePath.join(dir, name))
      .filter((path) => Fs.lstatSync(path).isFile())
      .map((path) => [path, Fs.readFileSync(path)])
  )

describe.skipIf(data === undefined)(
  "full onboarding with the real codex, the detached supervisor and the tiny model",
  () => {
    it(
      "install is green in order; status and doctor agree; uninstall is red; reinstall at a terminal is green with the same id; --purge keeps what is not blctx's",
      async () => {
        const h = makeDaemonHome("detached")
        home = h
        server = await serveTinyModel(data as string)
        useTinyModel(h, data as string, server)
        const placed = Fs.readdirSync(historyFixtures)
          .filter((name) => name.endsWith(".jsonl"))
          .map((name) => placeSession(h, name))
        expect(placed.length).toBeGreaterThan(0)
        // The person's transcripts, byte for byte: no command of the whole run may touch them.
        const sessions = NodePath.join(h.codexHome, "sessions")
        const transcripts = snapshot(sessions)

        // 1. Every step, in order, each passing; the hooks wait for the person's trust in Codex.
        const installed = await logged(h, ["install", "codex"])
        expectGreen(installed)
        expect(check(installed.report, "codex_hooks").detail).toMatch(PENDING_TRUST)
        expect(check(installed.report, "background_service").detail).toMatch(
          /^started blctxd \(pid \d+\) under the detached supervisor/
        )
        const installationId = h.installationId()
        const registered = await codexMcpGet(h)
        expect(registered.code, registered.stderr).toBe(0)

        // 2. status and doctor agree with install and with each other, step by step.
        const status = await logged(h, ["status"])
        expectGreen(status)
        expect(check(status.report, "codex_hooks").detail).toMatch(PENDING_TRUST)
        const doctor = await logged(h, ["doctor"])
        // Soft, so a disagreement is reported with everything after it still checked.
        expect.soft(statuses(doctor.report)).toEqual(statuses(status.report))
        expect.soft(doctor.report).toMatchObject({ ready: true, exit_code: 0 })
        expect.soft(doctor.code).toBe(0)

        // 3. After uninstall nothing is set up, and status says so with exit 1.
        const uninstalled = await logged(h, ["uninstall", "codex"])
        expect(uninstalled.report.exit_code).toBe(0)
        expect(uninstalled.code).toBe(0)
        const red = await logged(h, ["status"])
        expect(red.report.ready).toBe(false)
        expect(red.report.exit_code).toBe(1)
        expect(red.code).toBe(1)

        // 4. Reinstall as a person would, at a terminal, answering yes to the optional hooks.
        const { NO_COLOR: _noColor, ...personal } = h.env
        const terminal = await runAtTerminal(
          shellLine([process.execPath, builtProgram("cli"), "install", "codex"]),
          { ...personal, ...withCodex(), TERM: "xterm-256color" },
          [{ question: "[Y/n]", reply: "y\r" }]
        )
        const screen = await screenOf(terminal.output, 80, 24)
        console.log(`blctx install codex at a terminal (exit ${terminal.code}), as the terminal shows it:\n${screen}`)
        // The raw stream is mostly spinner redraws; its size says the animation really ran.
        console.log(`(the terminal received ${terminal.output.length} characters of output and escape sequences)`)
        expect(terminal.code, screen).toBe(0)
        for (const c of installed.report.checks) expect(screen).toContain(`✓ ${c.title} (${c.id}): `)
        expect(screen).toMatch(/^Ready: 11 passed, 0 failed, 0 blocked, 0 skipped\.$/m)
        const again = await logged(h, ["status"])
        expectGreen(again)
        expect(h.installationId()).toBe(installationId)

        // 5. --purge removes what blctx owns and nothing else: unknown files and transcripts stay as they were.
        const unknownInData = NodePath.join(h.xdg.data, "blctx", "kept-by-the-person.txt")
        const unknownInCodex = NodePath.join(h.codexHome, "kept-by-the-person.txt")
        Fs.writeFileSync(unknownInData, "not blctx's\n")
        Fs.writeFileSync(unknownInCodex, "not blctx's either\n")
        const purged = await logged(h, ["uninstall", "codex", "--purge"])
        expect(purged.report.exit_code).toBe(0)
        expect(purged.code).toBe(0)
        expect(Fs.readFileSync(unknownInData, "utf8")).toBe("not blctx's\n")
        expect(Fs.readFileSync(unknownInCodex, "utf8")).toBe("not blctx's either\n")
        expect(snapshot(sessions)).toEqual(transcripts)
        expect(Fs.existsSync(h.database)).toBe(false)
        expect(Fs.existsSync(NodePath.join(h.stateDir, "installation.json"))).toBe(false)
        expect(h.daemonPids()).toEqual([])
        expect((await codexMcpGet(h)).code).toBe(1)
        expect(Fs.existsSync(NodePath.join(h.codexHome, "skills", "base-layer-context"))).toBe(false)
        // hooks.json is shared with the person: blctx takes only its own entries out of it.
        const hooksFile = NodePath.join(h.codexHome, "hooks.json")
        expect(Fs.existsSync(hooksFile) ? Fs.readFileSync(hooksFile, "utf8") : "").not.toContain("blctx")
      },
      scaled(600_000)
    )
  }
)

describe.skipIf(data === undefined)("a new Codex user with no session yet", () => {
  it(
    "install codex is ready with nothing to index; status and doctor agree; the first session is indexed by the next install",
    async () => {
      const h = makeDaemonHome("detached")
      home = h
      server = await serveTinyModel(data as string)
      useTinyModel(h, data as string, server)
      Fs.mkdirSync(h.codexHome, { recursive: true, mode: 0o700 })

      const installed = await logged(h, ["install", "codex"])
      expect(notPassed(installed.report)).toEqual([])
      expect(installed.code).toBe(0)
      expect(check(installed.report, "history_index").detail).toBe(
        "nothing to index yet: session_discovery found no sessions"
      )
      expect(check(installed.report, "history_retrieval").detail).toMatch(
        /^no session indexed yet: search .* 0 results/
      )
      const [status, doctor] = await Promise.all([logged(h, ["status"]), logged(h, ["doctor"])])
      expect(statuses(status.report)).toEqual(statuses(installed.report))
      expect(statuses(doctor.report)).toEqual(statuses(installed.report))
      expect([status.code, doctor.code]).toEqual([0, 0])

      const [name] = Fs.readdirSync(historyFixtures).filter((n) => n.endsWith(".jsonl"))
      const first = placeSession(h, name as string)
      const again = await logged(h, ["install", "codex"])
      expect(notPassed(again.report)).toEqual([])
      expect(check(again.report, "history_index").detail).toMatch(/: 1 files indexed, /)
      expect(check(again.report, "history_retrieval").detail).toContain(`found ${first}:`)
      const later = await logged(h, ["status"])
      expect(notPassed(later.report)).toEqual([])
      expect(later.code).toBe(0)
    },
    scaled(300_000)
  )
})
