// docs/ui.png, the README's picture of the viewer: the recall benchmark's invented history
// (fixtures/recall-history: sixteen Codex and Claude Code sessions over four projects) indexed
// in a throwaway home, `blctx ui --no-open`, and Debian's chromium (playwright-core from
// test-tools) at 1280x800 on one search. Run after `npm run build`:
//   node scripts/ui-screenshot.mjs [OUT.png] [HASH_ROUTE]
// The page shows paths under the home (transcripts, the model folder). BLCTX_SCREENSHOT_HOME
// names an empty home to use instead of a temporary one; docs/ui.png was made as root in a
// private mount namespace, so that it reads /home/dev like the invented projects and nothing of
// the machine shows:
//   unshare --mount --propagation private sh -c \
//     'mount -t tmpfs tmpfs /home && BLCTX_SCREENSHOT_HOME=/home/dev node scripts/ui-screenshot.mjs'
import { execFile } from "node:child_process"
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { benchHome } from "../dist/bench/measure.js"
import { launchChromium, READY_PROBE, readyAfter } from "../dist/bench/ui-browser.js"

const run = promisify(execFile)
const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
const cli = NodePath.join(root, "dist", "bin", "blctx.mjs")
const fixtures = NodePath.join(root, "fixtures", "recall-history")
const out = NodePath.resolve(process.argv[2] ?? NodePath.join(root, "docs", "ui.png"))
const view = process.argv[3] ?? "#/search?q=retry"
/** The README shows it; a larger file only weighs on every clone. */
const MAX_BYTES = 200 * 1024

const chosen = process.env.BLCTX_SCREENSHOT_HOME
const scratch = chosen ?? mkdtempSync(NodePath.join(tmpdir(), "blctx-screenshot-"))
const home = chosen ?? NodePath.join(scratch, "home", "dev")
mkdirSync(home, { recursive: true })
if (readdirSync(home).length > 0) throw new Error(`${home} is not empty: the screenshot needs a fresh home`)
const { env } = benchHome("", home)
env.CLAUDE_CONFIG_DIR = ""
env.GEMINI_CLI_HOME = ""

const blctx = (...args) => run(process.execPath, [cli, ...args], { env, maxBuffer: 16 * 1024 * 1024 })

let browser
try {
  cpSync(NodePath.join(fixtures, "codex"), NodePath.join(home, ".codex"), { recursive: true })
  cpSync(NodePath.join(fixtures, "claude"), NodePath.join(home, ".claude"), { recursive: true })
  await blctx("install", "codex", "--step", "service_health", "--json")
  await blctx("index", "--wait")
  const link = JSON.parse((await blctx("ui", "--no-open")).stdout)
  browser = await launchChromium()
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light" })
  const page = await context.newPage()
  await page.addInitScript({ content: READY_PROBE })
  await page.goto(link.url, { waitUntil: "commit" })
  await readyAfter(page, 60_000)
  // The view to show: a fresh document at its route, so its first render is the one waited on.
  await page.goto("about:blank")
  await page.goto(`${new URL(link.url).origin}/${view}`, { waitUntil: "commit" })
  await readyAfter(page, 60_000)
  mkdirSync(NodePath.dirname(out), { recursive: true })
  await page.screenshot({ path: out, type: "png" })
  const bytes = statSync(out).size
  console.log(`${NodePath.relative(root, out)}: ${(bytes / 1024).toFixed(0)} KiB (1280x800, ${view})`)
  if (bytes > MAX_BYTES) {
    console.error(`larger than ${MAX_BYTES / 1024} KiB: choose a view with less in it`)
    process.exitCode = 1
  }
} finally {
  await browser?.close().catch(() => undefined)
  await blctx("uninstall", "codex", "--purge", "--json").catch(() => undefined)
  rmSync(scratch, { recursive: true, force: true })
}
