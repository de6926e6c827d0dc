import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import type { BrowserContext } from "../../test-tools/node_modules/playwright-core/index.js"
import { CHROMIUM_ARGS, chromiumPath as chromiumPathOf } from "../../testing/chromium-flags.js"

/**
 * Test support: Debian's chromium (`/usr/bin/chromium`, or `BLCTX_CHROMIUM`), driven by
 * playwright-core from test-tools/ (installed by `npm run test:tools`, like the agents' CLIs),
 * headless, with a fresh profile and nothing that reaches the network by itself. A missing
 * browser fails with how to get it: CI installs both, so a browser test never skips.
 */

const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..", "..")
const playwrightEntry = NodePath.join(root, "test-tools", "node_modules", "playwright-core", "index.mjs")

export const chromiumPath = chromiumPathOf()

export interface Chromium {
  readonly context: BrowserContext
  readonly close: () => Promise<void>
}

/** One headless chromium with its own profile directory, removed on close. */
export const launchChromium = async (): Promise<Chromium> => {
  if (!Fs.existsSync(chromiumPath))
    throw new Error(`no chromium at ${chromiumPath}: apt-get install chromium (or set BLCTX_CHROMIUM)`)
  if (!Fs.existsSync(playwrightEntry)) throw new Error("playwright-core is missing: run npm run test:tools")
  const { chromium } = (await import(
    playwrightEntry
  )) as typeof import("../../test-tools/node_modules/playwright-core/index.js")
  const profile = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "blctx-chromium-"))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1100, height: 900 }
  })
  return {
    context,
    close: async () => {
      await context.close().catch(() => undefined)
      Fs.rmSync(profile, { recursive: true, force: true })
    }
  }
}

/** Where the browser tests keep their screenshots (git-ignored). */
export const screenshotDir = NodePath.join(root, "test-results", "ui")
