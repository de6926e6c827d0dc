import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { expect } from "vitest"
import type { DaemonHome } from "./daemon-harness.js"

/** The project's own Codex sessions (fixtures/history), placed in a test home by `placeSession`. */
export const historyFixtures = NodePath.resolve(
  NodePath.dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "fixtures",
  "history"
)

/** A check of an installer `--json` report (the fields tests read). */
export interface Check {
  readonly id: string
  readonly title: string
  readonly status: string
  readonly detail: string
  readonly remediation?: string
}

/** An installer `--json` report (install, status, doctor, uninstall). */
export interface Report {
  readonly command: string
  readonly ready: boolean
  readonly exit_code: number
  readonly checks: ReadonlyArray<Check>
}

/** An installer command's report and the process's own exit code. */
export interface ReportRun {
  readonly code: number | null
  readonly report: Report
}

/** Runs an installer command with `--json` and parses its one document (stderr explains an empty stdout). */
export const reportRun = async (
  h: DaemonHome,
  args: ReadonlyArray<string>,
  env?: NodeJS.ProcessEnv
): Promise<ReportRun> => {
  const result = await h.blctx([...args, "--json"], env === undefined ? undefined : { env })
  expect(result.stdout, `${args.join(" ")}: ${result.stderr}`).not.toBe("")
  return { code: result.code, report: JSON.parse(result.stdout) as Report }
}

/** The report of an installer command run with `--json`. */
export const report = async (h: DaemonHome, args: ReadonlyArray<string>): Promise<Report> =>
  (await reportRun(h, args)).report

/** The check with this id (fails the test when the report has none). */
export const check = (r: Report, id: string): Check => {
  const found = r.checks.find((c) => c.id === id)
  if (found === undefined) throw new Error(`no ${id} check in ${JSON.stringify(r)}`)
  return found
}

/** Places a fixture transcript as a Codex session of 2 February 2026; returns where it went. */
export const placeSession = (h: DaemonHome, name: string) => {
  const dir = NodePath.join(h.codexHome, "sessions", "2026", "02", "02")
  Fs.mkdirSync(dir, { recursive: true })
  const target = NodePath.join(dir, `rollout-2026-02-02T09-00-00-${name}`)
  Fs.copyFileSync(NodePath.join(historyFixtures, name), target)
  return target
}
