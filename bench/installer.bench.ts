import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { line, percentile, timeMany } from "./measure.js"

const run = promisify(execFile)
const cli = NodePath.join(NodePath.dirname(fileURLToPath(import.meta.url)), "..", "bin", "blctx.mjs")

/** Wall time of `blctx status --json` (process start included), the cost a script pays per check. */
export const run_ = async () => {
  const home = mkdtempSync(NodePath.join(tmpdir(), "blctx-bench-"))
  const env = {
    ...process.env,
    HOME: home,
    XDG_DATA_HOME: "",
    XDG_STATE_HOME: "",
    XDG_CONFIG_HOME: "",
    XDG_CACHE_HOME: ""
  }
  try {
    await run(process.execPath, [cli, "install", "codex", "--step", "data_directory", "--json"], { env })
    const times = await timeMany(15, () =>
      run(process.execPath, [cli, "status", "--step", "data_directory", "--json"], { env })
    )
    line(
      "status --step data_directory p50 / p95",
      `${percentile(times, 50).toFixed(1)} ms / ${percentile(times, 95).toFixed(1)} ms`
    )
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
}
export { run_ as run }
