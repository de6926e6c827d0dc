import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import * as NodePath from "node:path"
import { type IsolatedHome, makeIsolatedHome, testProgram } from "./isolated-home.js"

const Database = createRequire(import.meta.url)("better-sqlite3") as new (
  file: string,
  options?: { readonly timeout?: number }
) => { exec(sql: string): void; close(): void }

export type Supervisor = "detached" | "fake-systemd"

/**
 * An isolated home whose `blctx` uses the given supervisor; `dispose` kills everything it started.
 * Under fake systemd, `blctx` is the test entry with the fake composed in
 * (acceptance/programs/cli-fake-systemd.ts), talking to a fake manager this home starts; the
 * detached supervisor is what the product's CLI picks by itself where no systemd runs, and
 * BLCTX_SERVICE_MANAGER=detached makes sure of it.
 */
export interface DaemonHome extends IsolatedHome {
  readonly supervisor: Supervisor
  readonly stateDir: string
  readonly socketPath: string
  readonly database: string
  readonly installationId: () => string
  /** Live processes whose command line mentions this home (daemons, the fake manager). */
  readonly processes: () => ReadonlyArray<number>
  readonly daemonPids: () => ReadonlyArray<number>
  readonly unitPath: () => string
  /**
   * With `heldDaemon`: how long each maintenance step or repair batch holds the writer, or each
   * import waits before reading a file, from now on (the held daemon reads it at every step; 0
   * holds nothing). The daemon writes `<stateDir>/test-held-<hold>` when a hold begins.
   */
  readonly holdJobs: (holds: {
    readonly maintenance_step_ms?: number
    readonly repair_batch_ms?: number
    readonly import_file_ms?: number
  }) => void
}

export interface DaemonHomeOptions {
  /**
   * Run the held daemon (acceptance/programs/held-daemon.ts) instead of the product's, so a test
   * can make a job hold the writer for as long as it needs (`holdJobs`).
   */
  readonly heldDaemon?: boolean
}

const commandLine = (pid: number): string | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
    if (state === "Z" || state === "X") return undefined
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ")
  } catch {
    return undefined
  }
}

export const processesMentioning = (text: string): ReadonlyArray<number> =>
  readdirSync("/proc")
    .filter((e) => /^\d+$/.test(e))
    .map(Number)
    .filter((pid) => pid !== process.pid && commandLine(pid)?.includes(text) === true)

export const isAlive = (pid: number) => commandLine(pid) !== undefined

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * Bounds for waiting on events grow with BLCTX_TEST_TIME_SCALE (default 1) so a slower or busier
 * machine gets proportionally more time; tests wait on events, never on the clock alone.
 */
export const TIME_SCALE = Math.max(1, Number(process.env.BLCTX_TEST_TIME_SCALE ?? "1") || 1)
export const scaled = (ms: number) => Math.round(ms * TIME_SCALE)

/** Polls `check` until it returns a value (not undefined) or the (scaled) bound passes. */
export const waitFor = async <A>(what: string, check: () => A | undefined | Promise<A | undefined>, ms = 60_000) => {
  const deadline = Date.now() + scaled(ms)
  while (Date.now() < deadline) {
    const value = await check()
    if (value !== undefined) return value
    await sleep(100)
  }
  throw new Error(`timed out after ${scaled(ms)} ms waiting for ${what}`)
}

export const makeDaemonHome = (supervisor: Supervisor, options: DaemonHomeOptions = {}): DaemonHome => {
  const fake = supervisor === "fake-systemd"
  const cli = options.heldDaemon ? testProgram("cli-held-daemon") : fake ? testProgram("cli-fake-systemd") : undefined
  const base = makeIsolatedHome(cli === undefined ? undefined : { cli })
  const fakeDir = NodePath.join(base.home, "fake-systemd")
  let manager: ChildProcess | undefined
  if (fake) {
    mkdirSync(fakeDir, { mode: 0o700 })
    manager = spawn(process.execPath, [testProgram("fake-systemd-manager"), fakeDir], {
      stdio: "ignore",
      env: base.env
    })
  }
  /** The fake manager writes manager.pid once its directory is ready; blctx waits for that once. */
  let managerUp: Promise<unknown> | undefined
  const managerReady = () => {
    managerUp ??= fake
      ? waitFor(
          "the fake systemd manager to start",
          () => (existsSync(NodePath.join(fakeDir, "manager.pid")) ? true : undefined),
          30_000
        )
      : Promise.resolve()
    return managerUp
  }
  const env: NodeJS.ProcessEnv = {
    ...base.env,
    ...(fake ? { BLCTX_FAKE_SYSTEMD_DIR: fakeDir } : { BLCTX_SERVICE_MANAGER: "detached" })
  }
  const stateDir = NodePath.join(base.xdg.state, "blctx")
  const installationId = () =>
    (JSON.parse(readFileSync(NodePath.join(stateDir, "installation.json"), "utf8")) as { installation_id: string })
      .installation_id
  const processes = () => processesMentioning(base.home)
  return {
    ...base,
    env,
    supervisor,
    stateDir,
    socketPath: NodePath.join(stateDir, "blctxd.sock"),
    database: NodePath.join(base.xdg.data, "blctx", "context.db"),
    installationId,
    processes,
    daemonPids: () => processesMentioning(base.home).filter((pid) => commandLine(pid)?.includes("daemon.js") === true),
    holdJobs: (holds) => {
      mkdirSync(stateDir, { recursive: true, mode: 0o700 })
      writeFileSync(NodePath.join(stateDir, "test-holds.json"), JSON.stringify(holds), { mode: 0o600 })
    },
    unitPath: () =>
      supervisor === "fake-systemd"
        ? NodePath.join(base.xdg.config, "blctx", `blctxd-${installationId()}.service`)
        : NodePath.join(stateDir, "blctxd.launch.json"),
    blctx: async (args, options) => {
      await managerReady()
      return base.blctx(args, { ...options, env: { ...env, ...options?.env } })
    },
    dispose: () => {
      manager?.kill("SIGKILL")
      for (const pid of processesMentioning(base.home)) {
        try {
          process.kill(pid, "SIGKILL")
        } catch {
          // already gone
        }
      }
      base.dispose()
    }
  }
}

/** The check with this id from a `--json` report. */
export const checkOf = (stdout: string, id: string) => {
  const report = JSON.parse(stdout) as {
    checks: Array<{ id: string; status: string; detail: string; remediation?: string }>
  }
  const check = report.checks.find((c) => c.id === id)
  if (check === undefined) throw new Error(`no ${id} check in ${stdout}`)
  return check
}

/** Whether another connection can take the database's write lock right now (false while a job writes). */
export const writerHeld = (database: string): boolean => {
  const db = new Database(database, { timeout: 0 })
  try {
    db.exec("BEGIN IMMEDIATE")
    db.exec("ROLLBACK")
    return false
  } catch {
    return true
  } finally {
    db.close()
  }
}

/**
 * `f` over `items`, at most `limit` at a time, answers in the items' order: for a test's many
 * independent CLI calls, each its own process, so they overlap without starting all at once.
 */
export const eachConcurrently = async <A, B>(
  items: ReadonlyArray<A>,
  f: (item: A) => Promise<B>,
  limit = 4
): Promise<Array<B>> => {
  const answers = new Array<B>(items.length)
  let next = 0
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) answers[i] = await f(items[i] as A)
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return answers
}
