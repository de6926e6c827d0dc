import { createRequire } from "node:module"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { CHROMIUM_ARGS, chromiumPath } from "../testing/chromium-flags.js"

/**
 * Debian's chromium driven by playwright-core from test-tools (installed apart, as for the
 * browser tests), for the viewer's benchmark and its README screenshot. Only the few calls used
 * here are typed, so the project's own type check does not depend on test-tools being installed.
 */

/** The repository's root, from `dist/bench/`. */
export const repoRoot = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..", "..")

export interface RequestSizes {
  readonly responseBodySize: number
  readonly responseHeadersSize: number
  readonly requestBodySize: number
  readonly requestHeadersSize: number
}
export interface BrowserRequest {
  url(): string
  method(): string
  sizes(): Promise<RequestSizes>
}
export interface BrowserPage {
  goto(url: string, options?: { readonly waitUntil?: "commit" | "load"; readonly timeout?: number }): Promise<unknown>
  waitForSelector(selector: string, options?: { readonly timeout?: number }): Promise<unknown>
  evaluate<T>(expression: string): Promise<T>
  addInitScript(script: { readonly content: string }): Promise<void>
  on(event: "requestfinished", listener: (request: BrowserRequest) => void): void
  screenshot(options: { readonly path: string; readonly type?: "png"; readonly fullPage?: boolean }): Promise<Buffer>
  close(): Promise<void>
}
export interface BrowserContext {
  newPage(): Promise<BrowserPage>
  close(): Promise<void>
}
export interface Browser {
  newContext(options?: {
    readonly viewport?: { readonly width: number; readonly height: number }
    readonly deviceScaleFactor?: number
    readonly colorScheme?: "light" | "dark"
  }): Promise<BrowserContext>
  version(): string
  close(): Promise<void>
}
interface Chromium {
  launch(options: {
    readonly executablePath: string
    readonly headless: boolean
    readonly args: ReadonlyArray<string>
  }): Promise<Browser>
}

const playwright = (): { readonly chromium: Chromium } => {
  const require = createRequire(NodePath.join(repoRoot, "test-tools", "package.json"))
  try {
    return require("playwright-core") as { readonly chromium: Chromium }
  } catch (cause) {
    throw new Error("playwright-core is not installed in test-tools/: run `npm run test:tools`", { cause })
  }
}

/** A fresh headless chromium: playwright gives each launch a new temporary profile, so every launch is cold. */
export const launchChromium = async (): Promise<Browser> =>
  playwright().chromium.launch({ executablePath: chromiumPath(), headless: true, args: CHROMIUM_ARGS })

/**
 * Run in every document before the page's own script (through the DevTools protocol, so the
 * page's Content-Security-Policy does not apply to it): records when `document.body.dataset.ready`
 * becomes "1", in milliseconds since the navigation started (`performance.now()`).
 */
export const READY_PROBE = `(() => {
  const mark = () => {
    if (window.__blctxReadyAt === undefined && document.body && document.body.dataset.ready === "1") {
      window.__blctxReadyAt = performance.now()
    }
  }
  new MutationObserver(mark).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ["data-ready"] })
})()`

/**
 * Waits until the page said it rendered its first view; returns the time since navigation start,
 * in ms, as the probe recorded it. (A selector wait, not `waitForFunction`: the page's CSP has no
 * 'unsafe-eval', which a string predicate needs.)
 */
export const readyAfter = async (page: BrowserPage, timeoutMs: number): Promise<number> => {
  await page.waitForSelector('body[data-ready="1"]', { timeout: timeoutMs })
  return page.evaluate<number>("window.__blctxReadyAt")
}
