import { execFile } from "node:child_process"
import { existsSync, mkdirSync } from "node:fs"
import * as NodePath from "node:path"
import { promisify } from "node:util"
import { Effect, Schema } from "effect"
import { stopProcess } from "../layers/daemon-process-table.js"
import { connect } from "../src/rpc/client.js"
import { chromiumPath } from "../testing/chromium-flags.js"
import { benchHome, daemonLogTail, figure, line, percentile, rssOf } from "./measure.js"
import {
  type Browser,
  type BrowserPage,
  type BrowserRequest,
  launchChromium,
  READY_PROBE,
  readyAfter,
  repoRoot
} from "./ui-browser.js"
import { makeZipfHistory } from "./zipf-history.js"

const run = promisify(execFile)
const cli = NodePath.join(repoRoot, "dist", "bin", "blctx.mjs")

/** The bound: the page loads in under a second with this many chunks indexed. */
const TARGET_CHUNKS = 100_000
const GOAL_MS = 1000
const TURNS_PER_FILE = 100
/** Chunks per rollout file without a model (whole-message chunks), before the first pass measures it. */
const FIRST_GUESS_CHUNKS_PER_FILE = 400
const WARM_LOADS = 20
const HEALTH_LOADS = 10
const ACTIVITY_CALLS = 20
const LOAD_TIMEOUT_MS = 60_000
/** A home to keep between runs (created if missing): its indexed history is reused, its daemon stopped at the end. */
const KEEP_HOME_ENV = "BLCTX_BENCH_UI_HOME"

/** A week before today (UTC midnight): the history's first record. */
const HISTORY_START = Math.floor(Date.now() / 86_400_000) * 86_400_000 - 7 * 86_400_000

const msSince = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6
const sorted = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`

/** What `blctx ui --no-open` prints (JSON by default). */
const UiLink = Schema.parseJson(Schema.Struct({ url: Schema.String, port: Schema.Int, expires_at: Schema.String }))

/** `blctx ui --no-open`: makes sure the daemon runs, and mints a one-time link. */
const openUi = async (env: NodeJS.ProcessEnv) => {
  const { stdout } = await run(process.execPath, [cli, "ui", "--no-open"], { env })
  return Schema.decodeUnknownSync(UiLink)(stdout.trim())
}

const withClient = <A, E>(
  socketPath: string,
  use: (client: Effect.Effect.Success<ReturnType<typeof connect>>) => Effect.Effect<A, E>
) => Effect.runPromise(Effect.scoped(Effect.flatMap(connect({ socketPath, timeout: "120 seconds" }), use)))

/**
 * A Zipf history (`zipf-history.ts`) of at least `TARGET_CHUNKS` chunks, indexed without a model
 * (whole-message chunks, vectors pending: the page reads SQLite, not vectors). Files are added
 * until the index holds enough chunks.
 */
const indexHistory = async (home: string, env: NodeJS.ProcessEnv, socketPath: string) => {
  const codexHome = NodePath.join(home, ".codex")
  // Its last week, so the health view's 90 days hold all of it (about six days at a second a record).
  const history = makeZipfHistory({ seed: 3, start: HISTORY_START })
  let files = 0
  // A kept home may hold the history already (the generator writes the same bytes again).
  let chunks = (await withClient(socketPath, (c) => c.ContextStatus())).coverage.chunks
  if (chunks >= TARGET_CHUNKS) {
    line("history already indexed (kept home)", `${chunks} chunks`)
    return chunks
  }
  let perFile = FIRST_GUESS_CHUNKS_PER_FILE
  const start = process.hrtime.bigint()
  while (chunks < TARGET_CHUNKS) {
    const wanted = Math.max(files + 1, Math.ceil((TARGET_CHUNKS * 1.02) / perFile))
    history.write(codexHome, wanted - files, TURNS_PER_FILE, files + 1)
    files = wanted
    await run(process.execPath, [cli, "index", "--root", codexHome, "--wait"], { env, maxBuffer: 64 * 1024 * 1024 })
    chunks = (await withClient(socketPath, (c) => c.ContextStatus())).coverage.chunks
    perFile = Math.max(1, chunks / files)
  }
  line("history indexed (no model)", `${chunks} chunks in ${files} files, ${(msSince(start) / 1000).toFixed(1)} s`)
  return chunks
}

/** The bytes each finished request moved (headers and body as sent, per the browser), by kind. */
const byteCounter = (page: BrowserPage) => {
  let pending: Array<Promise<{ readonly rpc: boolean; readonly bytes: number }>> = []
  page.on("requestfinished", (request: BrowserRequest) => {
    const rpc = request.method() === "POST" && new URL(request.url()).pathname === "/rpc"
    pending.push(
      request.sizes().then(
        (s) => ({ rpc, bytes: Math.max(0, s.responseBodySize) + Math.max(0, s.responseHeadersSize) }),
        () => ({ rpc, bytes: 0 })
      )
    )
  })
  return {
    reset: () => {
      pending = []
    },
    settle: async () => {
      const done = await Promise.all(pending)
      const sum = (rpc: boolean) => done.filter((d) => d.rpc === rpc).reduce((n, d) => n + d.bytes, 0)
      return { page: sum(false), rpc: sum(true), requests: done.length }
    }
  }
}

/** Where a load's time went, by the page's own timings (ms since navigation start). */
const PHASES = `(() => {
  const nav = performance.getEntriesByType("navigation")[0]
  const rpc = performance.getEntriesByType("resource").filter((e) => new URL(e.name).pathname === "/rpc")
  return {
    domContentLoaded: nav ? nav.domContentLoadedEventEnd : 0,
    firstRpcStart: rpc.length ? Math.min(...rpc.map((e) => e.startTime)) : 0,
    lastRpcEnd: rpc.length ? Math.max(...rpc.map((e) => e.responseEnd)) : 0
  }
})()`
interface Phases {
  readonly domContentLoaded: number
  readonly firstRpcStart: number
  readonly lastRpcEnd: number
}

interface Load {
  /** From navigation start to `data-ready="1"`, as the page's own clock says. */
  readonly inPage: number
  /** The same from here: `goto` called to the ready flag seen. */
  readonly wall: number
  readonly bytes: { readonly page: number; readonly rpc: number; readonly requests: number }
  readonly phases: Phases
}

/** One navigation to `url`, from a blank page, timed to the ready flag. */
const load = async (page: BrowserPage, bytes: ReturnType<typeof byteCounter>, url: string): Promise<Load> => {
  await page.goto("about:blank")
  bytes.reset()
  const start = process.hrtime.bigint()
  await page.goto(url, { waitUntil: "commit", timeout: LOAD_TIMEOUT_MS })
  const inPage = await readyAfter(page, LOAD_TIMEOUT_MS)
  const wall = msSince(start)
  const phases = await page.evaluate<Phases>(PHASES)
  return { inPage, wall, bytes: await bytes.settle(), phases }
}

const loadFigures = (name: string, loads: ReadonlyArray<Load>) => {
  const times = sorted(loads.map((l) => l.inPage))
  const p50 = percentile(times, 50)
  const p95 = percentile(times, 95)
  const goal = { name: "the 1 s goal", value: GOAL_MS }
  figure(`${name} p50, 100k chunks`, p50, "ms", { reference: goal, goal: "< 1 s" })
  figure(`${name} p95, 100k chunks`, p95, "ms", { reference: goal, goal: "< 1 s" })
  const median = (f: (p: Phases) => number) => percentile(sorted(loads.map((l) => f(l.phases))), 50).toFixed(0)
  line(
    `  ${name}, where the time went (p50)`,
    `DOMContentLoaded ${median((p) => p.domContentLoaded)} ms, RPC from ${median((p) => p.firstRpcStart)} to ${median((p) => p.lastRpcEnd)} ms, ready ${p50.toFixed(0)} ms`
  )
  const wall = sorted(loads.map((l) => l.wall))
  line(
    `  ${name}, seen from the driver p50 / p95`,
    `${percentile(wall, 50).toFixed(0)} / ${percentile(wall, 95).toFixed(0)} ms over ${loads.length} loads`
  )
}

/** The viewer's loads: cold (fresh daemon, fresh browser, the one-time link), then warm ones of two views. */
const measurePage = async (browser: Browser, link: { readonly url: string }) => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  try {
    const page = await context.newPage()
    await page.addInitScript({ content: READY_PROBE })
    const bytes = byteCounter(page)
    const cold = await load(page, bytes, link.url)
    figure("page load, cold (fresh daemon and browser, one-time link), 100k chunks", cold.inPage, "ms", {
      reference: { name: "the 1 s goal", value: GOAL_MS },
      goal: "< 1 s"
    })
    line(
      "  cold load, seen from the driver; where the time went",
      `${cold.wall.toFixed(0)} ms; DOMContentLoaded ${cold.phases.domContentLoaded.toFixed(0)} ms, RPC from ${cold.phases.firstRpcStart.toFixed(0)} to ${cold.phases.lastRpcEnd.toFixed(0)} ms`
    )
    figure("page transferred, first view (document and assets)", cold.bytes.page / 1024, "KiB")
    line("  the first view's RPC answers", `${kib(cold.bytes.rpc)} in ${cold.bytes.requests} requests in all`)
    const origin = new URL(link.url).origin
    const warm: Array<Load> = []
    for (let i = 0; i < WARM_LOADS; i++) warm.push(await load(page, bytes, `${origin}/`))
    loadFigures("page load (first view)", warm)
    const health: Array<Load> = []
    for (let i = 0; i < HEALTH_LOADS; i++) health.push(await load(page, bytes, `${origin}/#/health`))
    loadFigures("page load (#/health)", health)
    const last = health[health.length - 1]
    if (last !== undefined)
      line("  #/health's RPC answers", `${kib(last.bytes.rpc)} (${last.bytes.requests} requests in all)`)
  } finally {
    await context.close()
  }
}

/** The health read itself through the daemon: a year of days (the most the page asks) and the default 90. */
const measureIndexActivity = (socketPath: string) =>
  withClient(socketPath, (client) =>
    Effect.gen(function* () {
      const timed = function* (days: number) {
        const times: Array<number> = []
        let answer = yield* client.IndexActivity({ days })
        for (let i = 0; i < ACTIVITY_CALLS; i++) {
          const start = process.hrtime.bigint()
          answer = yield* client.IndexActivity({ days })
          times.push(msSince(start))
        }
        return { times: sorted(times), answer }
      }
      const year = yield* timed(366)
      const quarter = yield* timed(90)
      return { year, quarter, pid: (yield* client.Ping()).pid }
    })
  )

/** Why the browser cannot run here, if it cannot: no chromium, or playwright-core not installed in test-tools. */
const browserMissing = () => {
  if (!existsSync(chromiumPath()))
    return `no chromium at ${chromiumPath()} (install Debian's chromium, or set BLCTX_CHROMIUM)`
  if (!existsSync(NodePath.join(repoRoot, "test-tools", "node_modules", "playwright-core"))) {
    return "playwright-core is not installed in test-tools/ (npm run test:tools)"
  }
  return undefined
}

/**
 * `npm run bench -- ui`: the viewer's load time with 100k chunks indexed (the "under 1 s").
 * A Zipf history is indexed without a model; the daemon is stopped, so `blctx ui --no-open` starts
 * it as a person's first `blctx ui` would; Debian's chromium (playwright-core from test-tools)
 * opens the one-time link. A load is timed from navigation start to `document.body.dataset.ready
 * === "1"` by the page's own clock (a probe injected before the page's script); the cold first
 * load apart, then warm loads of the first view and of `#/health`, with the bytes transferred.
 */
export const run_ = async () => {
  const missing = browserMissing()
  if (missing !== undefined) {
    line("the viewer's page load", `skipped: ${missing}`)
    return
  }
  const keptHome = process.env[KEEP_HOME_ENV]
  if (keptHome !== undefined) mkdirSync(keptHome, { recursive: true })
  const { home, env, socketPath, dispose } =
    keptHome === undefined ? benchHome("blctx-bench-ui-") : benchHome("", keptHome)
  let browser: Browser | undefined
  try {
    await run(process.execPath, [cli, "install", "codex", "--step", "service_health", "--json"], { env })
    await indexHistory(home, env, socketPath)
    const { pid } = await withClient(socketPath, (c) => c.Ping())
    await Effect.runPromise(stopProcess(pid, "30 seconds"))

    const opened = process.hrtime.bigint()
    const link = await openUi(env)
    line("blctx ui --no-open, starting the daemon", `${msSince(opened).toFixed(0)} ms`)
    const launched = process.hrtime.bigint()
    browser = await launchChromium()
    line(`chromium ${browser.version()} launched (${chromiumPath()})`, `${msSince(launched).toFixed(0)} ms`)
    await measurePage(browser, link)

    const activity = await measureIndexActivity(socketPath)
    figure("IndexActivity p50 through the daemon, 100k chunks, 366 days", percentile(activity.year.times, 50), "ms")
    line(
      "  IndexActivity p50 / p95, 366 and 90 days",
      `${percentile(activity.year.times, 50).toFixed(1)} / ${percentile(activity.year.times, 95).toFixed(1)} ms, ${percentile(activity.quarter.times, 50).toFixed(1)} / ${percentile(activity.quarter.times, 95).toFixed(1)} ms (${activity.year.answer.days.length} days with activity, ${activity.year.answer.skipped_total} skipped files)`
    )
    line("daemon RSS after the loads", `${(rssOf(activity.pid) / 1024 / 1024).toFixed(0)} MiB`)
  } catch (error) {
    const tail = daemonLogTail(home)
    console.log(`\n  the run failed; the daemon log's last lines:\n${tail}`)
    throw error
  } finally {
    await browser?.close().catch(() => undefined)
    if (keptHome === undefined) {
      await run(process.execPath, [cli, "uninstall", "codex", "--purge", "--json"], { env }).catch(() => undefined)
      dispose()
    } else {
      const { pid } = await withClient(socketPath, (c) => c.Ping()).catch(() => ({ pid: 0 }))
      if (pid > 0) await Effect.runPromise(stopProcess(pid, "30 seconds")).catch(() => undefined)
    }
  }
}
export { run_ as run }
