import { randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { BlctxClient } from "../src/rpc/client.js"
import type { Page } from "../test-tools/node_modules/playwright-core/index.js"
import { type Chromium, launchChromium, screenshotDir } from "./support/chromium.js"
import { type DaemonHome, makeDaemonHome, scaled } from "./support/daemon-harness.js"

// The viewer in a real browser: Debian's chromium, driven by playwright-core, against the real
// daemon serving the page from dist/ui/ (`blctx ui`). One home, one daemon, one browser for the
// file; the steps run in order on one page, as a person would use it. Each view is kept as a
// screenshot in test-results/ui/.

const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
const builtClient = NodePath.join(root, "dist", "src", "rpc", "client.js")
const fixtures = NodePath.join(root, "fixtures", "ui")

const ORDINARY = "0199e000-0000-7000-8000-0000000000a1"
const HOSTILE = "0199e000-0000-7000-8000-0000000000b2"
const WAIT = scaled(30_000)

let home: DaemonHome
let browser: Chromium
let page: Page
let noteId: string
const dialogs: Array<string> = []
/** What the page logged and threw: shown when a step fails, so a failure says why. */
const pageLog: Array<string> = []

const withClient = async <A>(use: (client: BlctxClient) => Effect.Effect<A, unknown>) => {
  const { connect } = (await import(builtClient)) as typeof import("../src/rpc/client.js")
  return Effect.runPromise(
    Effect.scoped(Effect.flatMap(connect({ socketPath: home.socketPath, timeout: "60 seconds" }), use))
  )
}

/** Copies a fixture transcript into the home's Codex sessions, where Codex writes them. */
const placed = (name: string, sessionId: string) => {
  const path = NodePath.join(
    home.codexHome,
    "sessions",
    "2026",
    "03",
    "01",
    `rollout-2026-03-01T09-00-00-${sessionId}.jsonl`
  )
  Fs.mkdirSync(NodePath.dirname(path), { recursive: true })
  Fs.copyFileSync(NodePath.join(fixtures, name), path)
  return path
}

const logNote = (text: string) =>
  withClient((c) =>
    Effect.gen(function* () {
      const session = yield* c.OpenSession({ binding_key: randomUUID(), project: "/home/dev/harbour" })
      return yield* c.LogUpdate({ session_id: session.session_id, update_id: randomUUID(), text })
    })
  )

const shot = (name: string) => page.screenshot({ path: NodePath.join(screenshotDir, `${name}.png`), fullPage: true })

/** Goes to a route and waits until its view has rendered. */
const open = async (hash: string, view: string) => {
  await page.evaluate(`location.hash = ${JSON.stringify(hash)}`)
  await page.waitForSelector(`body[data-view="${view}"]`, { timeout: WAIT })
}

const searchFor = async (words: string) => {
  await open(`#/search?q=${encodeURIComponent(words)}`, "search")
  return page.locator('[data-role="hit"]')
}

interface Inertness {
  readonly scripts: ReadonlyArray<string | null>
  readonly images: number
  readonly embedded: number
  readonly hrefs: ReadonlyArray<string>
  readonly handlers: ReadonlyArray<string>
  readonly text: string
}

/** What no text from history may ever become on the page (read in the page; the test has no DOM types). */
const inertness = () =>
  page.evaluate<Inertness>(`({
    scripts: [...document.querySelectorAll("script")].map((s) => s.getAttribute("src")),
    images: document.querySelectorAll("img, image").length,
    embedded: document.querySelectorAll("iframe, object, embed, frame").length,
    hrefs: [...document.querySelectorAll("[href], [src], [action], [formaction]")].flatMap((e) =>
      ["href", "src", "action", "formaction"].map((n) => e.getAttribute(n)).filter((v) => v !== null)
    ),
    handlers: [...document.querySelectorAll("*")].flatMap((e) =>
      [...e.attributes].filter((a) => a.name.startsWith("on")).map((a) => a.name)
    ),
    text: document.body.textContent
  })`)

interface ShownMessage {
  readonly turn: string | null
  readonly cited: boolean
  readonly anchor: boolean
  readonly text: string
}

const shownMessages = () =>
  page.evaluate<ReadonlyArray<ShownMessage>>(`[...document.querySelectorAll("li.message")].map((li) => ({
    turn: li.getAttribute("data-turn"),
    cited: li.classList.contains("cited-turn"),
    anchor: li.getAttribute("data-anchor") === "1",
    text: li.textContent
  }))`)

const textOf = async (selector: string) => (await page.locator(selector).first().textContent()) ?? ""

beforeAll(async () => {
  Fs.mkdirSync(screenshotDir, { recursive: true })
  home = makeDaemonHome("detached")
  const install = await home.blctx(["install", "codex", "--step", "service_health", "--json"])
  expect(install.code, install.stdout + install.stderr).toBe(0)
  const indexed = await home.blctx([
    "index",
    placed("ordinary-session.jsonl", ORDINARY),
    placed("hostile-session.jsonl", HOSTILE),
    "--wait",
    "--json"
  ])
  expect(indexed.code, indexed.stdout + indexed.stderr).toBe(0)
  noteId = (await logNote("Deploy the harbour relay on Friday after the keyring rotation.")).note_id

  const ui = await home.blctx(["ui", "--no-open"])
  expect(ui.code, ui.stdout + ui.stderr).toBe(0)
  const { url } = JSON.parse(ui.stdout) as { url: string }
  expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/open\?token=[A-Za-z0-9_-]{43}$/)

  browser = await launchChromium()
  page = await browser.context.newPage()
  page.on("dialog", (dialog) => {
    dialogs.push(dialog.message())
    void dialog.dismiss()
  })
  page.on("console", (m) => pageLog.push(`${m.type()}: ${m.text()}`))
  page.on("pageerror", (e) => pageLog.push(`error: ${e.message}`))
  page.on("response", (r) => {
    if (r.status() >= 400) pageLog.push(`${r.status()} ${r.url()}`)
  })
  await page.goto(url)
  await page
    .waitForSelector('body[data-ready="1"]', { timeout: WAIT })
    .catch((e: Error) => Promise.reject(new Error(`${e.message}\npage log:\n${pageLog.join("\n")}`)))
}, 180_000)

afterAll(async () => {
  await browser?.close()
  home?.dispose()
})

describe("the viewer in a browser", () => {
  it("lands on the search box and the last turns", async () => {
    expect(new URL(page.url()).pathname).toBe("/")
    await expect(page.locator('input[name="q"]').count()).resolves.toBe(1)
    await page.waitForSelector('[data-role="recent-turn"]', { timeout: WAIT })
    await shot("landing")
  })

  it("searches, shows each hit's provenance, and opens the cited turn among its neighbours", async () => {
    const hits = await searchFor("pelicanconfig")
    await expect(hits.count()).resolves.toBeGreaterThan(0)
    const first = hits.first()
    const provenance = (await first.locator(".provenance").textContent()) ?? ""
    expect(provenance).toContain("codex")
    expect(provenance).toContain("/home/dev/harbour")
    expect(provenance).toContain(ORDINARY)
    expect(provenance).toMatch(/ordinary|rollout-.*\.jsonl:\d+/)
    await shot("search")

    await first.locator("a.cite").click()
    await page.waitForSelector('body[data-view="session"]', { timeout: WAIT })
    const turns = await shownMessages()
    const cited = turns.filter((t) => t.cited)
    expect(cited.length).toBeGreaterThan(0)
    expect(cited.some((t) => t.anchor && t.text.includes("pelicanconfig"))).toBe(true)
    // The neighbouring turns show too: the one before and the one after the cited turn.
    expect(new Set(turns.filter((t) => !t.cited).map((t) => t.turn)).size).toBeGreaterThanOrEqual(2)
    expect(turns.some((t) => t.text.includes("harbour signing keys"))).toBe(true)
    expect(turns.some((t) => t.text.includes("lighthouse cache"))).toBe(true)
    await shot("session")
  })

  it("says which synonyms a search also searched", async () => {
    // "stash" is nowhere in the history; WordNet gives "cache", which a turn holds.
    const hits = await searchFor("lighthouse stash")
    await expect(hits.count()).resolves.toBeGreaterThan(0)
    expect(await textOf(".summary")).toContain("Also searched, as synonyms: cache")
  })

  it("shows sessions by day and project", async () => {
    await open("#/timeline", "timeline")
    const text = await textOf("main")
    expect(text).toContain(ORDINARY)
    expect(text).toContain("/home/dev/harbour")
    expect(text).toContain("/home/dev/hostile")
    await shot("timeline")
    // A session opens from the timeline without a citation: its turns, found by its time range.
    await page.locator(`[data-role="session"] a[href^="#/session/${ORDINARY}"]`).click()
    await page.waitForSelector('body[data-view="session"]', { timeout: WAIT })
    const turns = await shownMessages()
    expect(turns.length).toBeGreaterThan(0)
    expect(turns.map((t) => t.text).join(" ")).toContain("Rotate the harbour keys")
  })

  it("edits a note and shows its history with the diff", async () => {
    await open("#/notes", "notes")
    await page.locator(`a[href="#/notes/${noteId}"]`).click()
    await page.waitForSelector('body[data-view="note"]', { timeout: WAIT })
    await page.locator("textarea").fill("Deploy the harbour relay on Monday after the keyring rotation.")
    await page.locator('form.editor button[type="submit"]').click()
    await page.waitForSelector('[data-role="revision"] >> text=revision 2', { timeout: WAIT })
    const diff = page.locator('[data-role="diff"]').first()
    await expect(diff.locator("del").allInnerTexts()).resolves.toContain("Friday")
    await expect(diff.locator("ins").allInnerTexts()).resolves.toContain("Monday")
    const history = await withClient((c) => c.NoteHistory({ note_id: noteId }))
    expect(history.current_revision).toBe(2)
    expect(history.revisions.at(-1)?.authorship).toBe("user_requested")
    await shot("note")
  })

  it("refuses a stale edit, shows the newer text, and overwrites nothing", async () => {
    await open(`#/notes/${noteId}`, "note")
    // Someone else (an agent) changes the note after the page read revision 2.
    await withClient((c) =>
      c.UpdateNote({ note_id: noteId, expected_revision: 2, text: "Deploy the relay on Tuesday instead." })
    )
    await page.locator("textarea").fill("Deploy the harbour relay on Wednesday.")
    await page.locator('form.editor button[type="submit"]').click()
    const conflict = page.locator('[data-role="conflict"]')
    await conflict.waitFor({ timeout: WAIT })
    expect(await conflict.textContent()).toContain("revision 3")
    expect(await conflict.locator('[data-role="newer-text"]').textContent()).toBe(
      "Deploy the relay on Tuesday instead."
    )
    await expect(page.locator("textarea").inputValue()).resolves.toBe("Deploy the harbour relay on Wednesday.")
    const history = await withClient((c) => c.NoteHistory({ note_id: noteId }))
    expect(history.current_revision).toBe(3)
    expect(history.revisions.at(-1)?.text).toBe("Deploy the relay on Tuesday instead.")
    await shot("note-conflict")
  })

  it("renders a hostile transcript as inert text: no dialog, no script or image from history, no javascript: link, bidi as escapes", async () => {
    const hits = await searchFor("Quetzalhostile")
    await expect(hits.count()).resolves.toBeGreaterThan(0)
    await shot("hostile-search")
    const onSearch = await inertness()
    await hits.first().locator("a.cite").click()
    await page.waitForSelector('body[data-view="session"]', { timeout: WAIT })
    await shot("hostile-session")
    for (const seen of [onSearch, await inertness()]) {
      expect(seen.scripts).toEqual(["/assets/app.js"])
      expect(seen.images).toBe(0)
      expect(seen.embedded).toBe(0)
      expect(seen.handlers).toEqual([])
      for (const href of seen.hrefs) expect(href).toMatch(/^(#\/|\/assets\/)/)
      expect(seen.hrefs.join(" ")).not.toMatch(/javascript:/i)
      expect(seen.text).toContain("<script>alert(1)</script>")
      expect(seen.text).toContain("<img src=x onerror=alert(1)>")
      expect(seen.text).toContain("[x](javascript:alert(1))")
      expect(seen.text).toContain("\\u{202e}evil\\u{202c}")
      expect(seen.text).toContain("\\u{2066}isolate\\u{2069}")
      expect(seen.text).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/)
    }
    expect(dialogs).toEqual([])
  })

  it("previews a forget, confirms it with the preview's token, and search no longer finds it", async () => {
    await open(`#/forget?session=${ORDINARY}`, "forget")
    const preview = page.locator('[data-role="forget-preview"]')
    const shown = (await preview.textContent()) ?? ""
    expect(shown).toContain("Would forget 6 messages")
    expect(shown).toContain("codex_transcript: 6 messages")
    expect(shown).toContain("pelicanconfig")
    await shot("forget-preview")
    // The preview removed nothing.
    expect((await withClient((c) => c.Search({ query: "pelicanconfig" }))).results.length).toBeGreaterThan(0)

    await page.locator('[data-role="confirm-forget"]').click()
    const done = page.locator('[data-role="forgotten"]')
    await done.waitFor({ timeout: WAIT })
    expect(await done.textContent()).toContain("Forgot 6 messages")
    await shot("forget-done")

    const hits = await searchFor("pelicanconfig")
    await page.waitForSelector(".answer", { timeout: WAIT })
    await expect(hits.count()).resolves.toBe(0)
    expect((await withClient((c) => c.Search({ query: "pelicanconfig" }))).results).toEqual([])
  })

  it("shows index health: per-day charts, pending vectors, capture counts", async () => {
    await open("#/health", "health")
    const text = await textOf("main")
    expect(text).toContain("vectors pending")
    expect(text).toContain("Capture")
    await expect(page.locator("svg.chart rect.bar").count()).resolves.toBeGreaterThan(0)
    await shot("health")
    expect(dialogs).toEqual([])
  })

  it("says the daemon is not answering when it is stopped (SIGSTOP), and answers again once resumed", async () => {
    const [daemon] = home.daemonPids()
    expect(daemon).toBeDefined()
    process.kill(daemon as number, "SIGSTOP")
    try {
      // The listener lives in the stopped process: the request stays open until the page gives up.
      await open("#/notes", "notes")
      const failure = page.locator(".failure")
      expect(await failure.getAttribute("data-kind")).toBe("DaemonNotAnswering")
      const text = (await failure.textContent()) ?? ""
      expect(text).toContain(`blctxd (pid ${daemon}) is not answering`)
      expect(text).toContain(`kill -CONT ${daemon}`)
      await shot("daemon-not-answering")
    } finally {
      process.kill(daemon as number, "SIGCONT")
    }
    await open("#/notes?offset=0", "notes")
    await expect(page.locator(".failure").count()).resolves.toBe(0)
    await expect(page.locator("ul.notes li").count()).resolves.toBeGreaterThan(0)
  })

  it("says how to get back in when the page's session is gone", async () => {
    await browser.context.clearCookies()
    await open("#/notes", "notes")
    const failure = page.locator(".failure")
    await failure.waitFor({ timeout: WAIT })
    expect(await failure.textContent()).toContain("blctx ui")
    await shot("session-gone")
  })
})
