import { execFile } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync } from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { testModelData } from "../testing/model-test-folder.js"
import { installBenchModel, readModelFolder } from "./bench-model.js"
import { benchHome, figure, line, percentile, timeMany } from "./measure.js"

const exec = promisify(execFile)
const here = NodePath.dirname(fileURLToPath(import.meta.url))
const root = NodePath.join(here, "..", "..")
/** The bundled CLI, as a person runs it. */
const blctx = NodePath.join(here, "..", "bin", "blctx.mjs")
/** The real agent CLIs: codex (a dev dependency) and Claude Code (test-tools/, `npm run test:tools`). */
const codexBin = NodePath.join(root, "node_modules", ".bin")
const claudeBin = NodePath.join(root, "test-tools", "node_modules", ".bin", "claude")

const RUNS = 5

/** The checks of a report that did not pass, as `id: detail`, for a line that says why. */
const notPassed = (stdout: string | undefined) => {
  try {
    const report = JSON.parse(stdout ?? "") as { checks: ReadonlyArray<{ id: string; status: string; detail: string }> }
    return report.checks
      .filter((c) => c.status !== "passed")
      .map((c) => `${c.id}: ${c.detail.slice(0, 160)}`)
      .join("; ")
  } catch {
    return String(stdout).slice(0, 200)
  }
}

/**
 * `blctx status` for both agents (codex and claude installed, the real CLIs answering, the tiny
 * model installed): the whole command as a person waits for it, against the 5 s goal. Skipped,
 * saying why, without the real Claude Code CLI or the test model data.
 */
export const runStatusBench = async () => {
  const data = testModelData()
  if (!existsSync(claudeBin) || data === undefined) {
    line("status, both agents", "skipped: needs test-tools (npm run test:tools) and BLCTX_TEST_MODEL_DATA")
    return
  }
  const { home, env: base, dispose } = benchHome("blctx-bench-status-")
  const env = { ...base, PATH: `${codexBin}:${process.env.PATH ?? ""}`, BLCTX_CLAUDE_BIN: claudeBin }
  // One Codex session, so the history steps have something to index and retrieve.
  const sessions = NodePath.join(home, ".codex", "sessions", "2026", "02", "02")
  mkdirSync(sessions, { recursive: true, mode: 0o700 })
  copyFileSync(
    NodePath.join(root, "fixtures", "history", "session-1.jsonl"),
    NodePath.join(sessions, "rollout-2026-02-02T09-00-00-session-1.jsonl")
  )
  const folder = readModelFolder(
    NodePath.join(data, "tiny-encoder"),
    "blctx-test/tiny-encoder",
    8,
    NodePath.join(data, "fast-bge-small-en")
  )
  const server = await installBenchModel(blctx, home, env, folder)
  try {
    for (const target of ["codex", "claude"]) {
      await exec(process.execPath, [blctx, "install", target, "--json"], { env, maxBuffer: 16 * 1024 * 1024 }).catch(
        (e: { stdout?: string }) => line(`install ${target}`, `not ready: ${notPassed(e.stdout)}`)
      )
    }
    const times = await timeMany(RUNS, () =>
      exec(process.execPath, [blctx, "status", "--json"], { env, maxBuffer: 16 * 1024 * 1024 }).catch(() => undefined)
    )
    line(
      `blctx status (codex + claude) p50 / max (${RUNS} runs)`,
      `${percentile(times, 50).toFixed(0)} ms / ${percentile(times, 100).toFixed(0)} ms`
    )
    figure("blctx status, both agents, p50", percentile(times, 50), "ms", {
      goal: "< 5000 ms on a quiet 2-core machine"
    })
  } finally {
    await exec(process.execPath, [blctx, "uninstall", "claude", "--purge", "--json"], { env }).catch(() => undefined)
    await exec(process.execPath, [blctx, "uninstall", "codex", "--purge", "--json"], { env }).catch(() => undefined)
    await server.close()
    dispose()
  }
}
