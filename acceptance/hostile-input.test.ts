import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import type { BlctxClient } from "../src/rpc/client.js"
import { type DaemonHome, makeDaemonHome, scaled, waitFor } from "./support/daemon-harness.js"
import { builtProgram, type IsolatedHome, makeIsolatedHome, type RunResult } from "./support/isolated-home.js"

const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
const history = NodePath.join(root, "fixtures", "history")
const builtClient = NodePath.join(root, "dist", "src", "rpc", "client.js")

const Database = createRequire(import.meta.url)("better-sqlite3") as new (
  file: string,
  options?: { readonly readonly?: boolean }
) => { prepare(sql: string): { all(...params: ReadonlyArray<unknown>): Array<Record<string, unknown>> }; close(): void }

const query = (home: DaemonHome, sql: string, ...params: ReadonlyArray<unknown>) => {
  const db = new Database(home.database, { readonly: true })
  try {
    return db.prepare(sql).all(...params)
  } finally {
    db.close()
  }
}

let homes: Array<IsolatedHome> = []
afterEach(() => {
  for (const h of homes) h.dispose()
  homes = []
})

const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`
const deepObject = (depth: number) => {
  let text = "1"
  for (let i = 0; i < depth; i++) text = `{"a":${text}}`
  return text
}
/** Two lines no reader may choke on: an array nested 5,000 deep, and a `type` holding an object as deep. */
const HOSTILE_LINES = [
  `{"type":"event_msg","payload":${nested(5_000)}}`,
  `{"timestamp":"2026-02-02T09:30:00Z","type":${deepObject(5_000)}}`
]

/** A fixture session copied into `dir`, with the hostile lines after its fourth line when asked. */
const transcript = (dir: string, fixture: string, hostile = false) => {
  Fs.mkdirSync(dir, { recursive: true })
  const target = NodePath.join(dir, `rollout-2026-02-02T09-00-00-${fixture}`)
  const lines = Fs.readFileSync(NodePath.join(history, fixture), "utf8").split("\n")
  if (hostile) lines.splice(4, 0, ...HOSTILE_LINES)
  Fs.writeFileSync(target, lines.join("\n"))
  return target
}

const fifoAt = (path: string) => {
  Fs.mkdirSync(NodePath.dirname(path), { recursive: true })
  execFileSync("mkfifo", [path])
  return path
}

/** Runs the built CLI, killing it if it has not exited within the (scaled) bound. */
const runBounded = (home: IsolatedHome, args: ReadonlyArray<string>, ms = 60_000) =>
  new Promise<RunResult & { readonly timedOut: boolean }>((resolve, reject) => {
    const child = spawn(process.execPath, [builtProgram("cli"), ...args], { env: home.env, cwd: "/" })
    let stdout = ""
    let stderr = ""
    let timedOut = false
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d
    })
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d
    })
    const timer = setTimeout(() => {
      timedOut = true
      child.kill("SIGKILL")
    }, scaled(ms))
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr, timedOut })
    })
  })

/** Parses stdout as exactly one JSON document. */
const oneDocument = <A>(result: RunResult): A => {
  expect(result.stdout.trim(), result.stderr).not.toBe("")
  return JSON.parse(result.stdout) as A
}

interface ExplorePreview {
  totals: { records: number; parse_errors: number; by_reason: Record<string, number> }
  records?: Array<{ line: number; record_type: string; error?: { reason: string; message: string } }>
}

interface ErrorDocument {
  error: { _tag: string; message: string }
  exit_code: number
}

describe("explore on hostile input", () => {
  it("a deeply nested line is reported as unreadable, and --json prints one JSON document", async () => {
    const home = makeIsolatedHome()
    homes.push(home)
    const file = transcript(NodePath.join(home.home, "t"), "session-1.jsonl", true)

    const conversation = await runBounded(home, ["explore", file, "--json"])
    expect(conversation.code, conversation.stderr).toBe(0)
    const totals = oneDocument<ExplorePreview>(conversation).totals
    expect(totals.parse_errors).toBe(2)
    expect(totals.by_reason["unclassified: unreadable line: too_deep"]).toBe(2)

    const raw = await runBounded(home, ["explore", file, "--view", "raw", "--limit", "200", "--json"])
    expect(raw.code, raw.stderr).toBe(0)
    const records = oneDocument<ExplorePreview>(raw).records ?? []
    expect(records.filter((r) => r.error !== undefined).map((r) => [r.line, r.error?.reason])).toEqual([
      [5, "too_deep"],
      [6, "too_deep"]
    ])
    // Every other line is still read and classified.
    expect(records.length).toBe(totals.records)
    expect(totals.records).toBeGreaterThan(90)

    const text = await runBounded(home, ["explore", file, "--view", "raw", "--limit", "200"])
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).not.toContain("RangeError")
  })

  it("a FIFO is refused at once with a clear error, as one JSON document with --json", async () => {
    const home = makeIsolatedHome()
    homes.push(home)
    const fifo = fifoAt(NodePath.join(home.home, "t", "rollout-fifo.jsonl"))

    const plain = await runBounded(home, ["explore", fifo])
    expect(plain.timedOut).toBe(false)
    expect(plain.code).toBe(1)
    expect(plain.stderr).toContain("is a FIFO (named pipe), not a regular file")
    expect(plain.stdout).toBe("")

    const json = await runBounded(home, ["explore", fifo, "--json"])
    expect(json.timedOut).toBe(false)
    expect(json.code).toBe(1)
    const document = oneDocument<ErrorDocument>(json)
    expect(document.exit_code).toBe(1)
    expect(document.error.message).toContain("FIFO")
    expect(json.stderr).toContain("FIFO")
  })

  it("the first SIGINT ends explore while it reads, with exit code 130 and one JSON document", async () => {
    const home = makeIsolatedHome()
    homes.push(home)
    // A terabyte that takes no disk: far more than explore can read before the signal arrives.
    const file = NodePath.join(home.home, "rollout-huge.jsonl")
    Fs.writeFileSync(file, "")
    Fs.truncateSync(file, 2 ** 40)

    const child: ChildProcess = spawn(process.execPath, [builtProgram("cli"), "explore", file, "--json"], {
      env: home.env,
      cwd: "/",
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    child.stdout?.setEncoding("utf8").on("data", (d: string) => {
      stdout += d
    })
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on("exit", (code, signal) => resolve({ code, signal }))
    )
    const closed = new Promise((resolve) => child.on("close", resolve))
    try {
      // Reading has begun once the file is open in the process.
      await waitFor("explore to open the file", () => {
        const fds = Fs.readdirSync(`/proc/${child.pid}/fd`)
        return fds.some((fd) => {
          try {
            return Fs.readlinkSync(`/proc/${child.pid}/fd/${fd}`) === file
          } catch {
            return false
          }
        })
          ? true
          : undefined
      })
      child.kill("SIGINT")
      const bound = new Promise<"still running">((resolve) =>
        setTimeout(() => resolve("still running"), scaled(30_000))
      )
      const outcome = await Promise.race([exited, bound])
      expect(outcome).toEqual({ code: 130, signal: null })
      await closed
      const document = JSON.parse(stdout) as ErrorDocument
      expect(document.exit_code).toBe(130)
      expect(document.error._tag).toBe("Interrupted")
    } finally {
      child.kill("SIGKILL")
    }
  })
})

interface Job {
  job: { id: string; state: string; counts: Record<string, number>; error: string | null }
}

const indexJson = async (h: DaemonHome, args: ReadonlyArray<string>) => {
  const result = await runBounded(h, ["index", ...args, "--wait", "--json"], 120_000)
  expect(result.timedOut).toBe(false)
  return { result, job: oneDocument<Job>(result).job }
}

const installService = async (h: DaemonHome) => {
  const install = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
  expect(install.code, install.stdout + install.stderr).toBe(0)
}

const withClient = async <A>(home: DaemonHome, use: (client: BlctxClient) => Effect.Effect<A, unknown>) => {
  const { connect } = (await import(builtClient)) as typeof import("../src/rpc/client.js")
  return Effect.runPromise(
    Effect.scoped(Effect.flatMap(connect({ socketPath: home.socketPath, timeout: "10 seconds" }), use))
  )
}

const finished = (h: DaemonHome, id: string) =>
  waitFor(
    `job ${id} to finish`,
    async () => {
      const status = await h.blctx(["index-status", id, "--json"])
      const job = (JSON.parse(status.stdout) as Job).job
      return job.state === "queued" || job.state === "running" ? undefined : job
    },
    120_000
  )

describe("index on hostile input", () => {
  it("deeply nested lines among good files: the good lines and files are indexed, the job says why it is partial, later jobs work", async () => {
    const h = makeDaemonHome("detached")
    homes.push(h)
    await installService(h)
    const dir = NodePath.join(h.codexHome, "sessions", "2026", "02", "02")
    const good = transcript(dir, "session-1.jsonl")
    const hostile = transcript(dir, "session-2.jsonl", true)
    const alsoGood = transcript(dir, "session-3.jsonl")

    const { result, job } = await indexJson(h, [good, hostile, alsoGood])
    expect(result.code, result.stderr).toBe(0)
    expect(job.state).toBe("partial")
    expect(job.counts).toMatchObject({ files_imported: 3, parse_errors: 2 })
    expect(job.error).toContain(`${hostile}: unreadable lines: 5 (too_deep), 6 (too_deep)`)
    const perFile = query(
      h,
      "SELECT f.path AS path, count(m.id) AS n FROM source_files f LEFT JOIN messages m ON m.source_file_id = f.id GROUP BY f.path"
    )
    expect(perFile.map((r) => r.path).sort()).toEqual([alsoGood, good, hostile].sort())
    for (const row of perFile) expect(Number(row.n)).toBeGreaterThan(0)

    const status = await h.blctx(["index-status", job.id, "--json"])
    expect((JSON.parse(status.stdout) as Job).job.state).toBe("partial")

    // The next run skips what is done and indexes what is new.
    const later = await indexJson(h, [good, hostile, alsoGood, transcript(dir, "session-4.jsonl")])
    expect(later.job.state).toBe("completed")
    expect(later.job.counts).toMatchObject({ files_unchanged: 3, files_imported: 1 })
  })

  it("a FIFO never holds a job: its file is counted unreadable with the reason, and later jobs run", async () => {
    const h = makeDaemonHome("detached")
    homes.push(h)
    await installService(h)
    const dir = NodePath.join(h.home, "t")
    const fifo = fifoAt(NodePath.join(dir, "rollout-fifo.jsonl"))
    const good = transcript(dir, "session-1.jsonl")

    // Submitted straight to the daemon, as a client that does not check paths first would.
    const submitted = await withClient(h, (client) =>
      client.SubmitJob({ kind: "import", params: { paths: [fifo, good], origin: "test" } })
    )
    const job = (await finished(h, submitted.job.id)) as Job["job"]
    expect(job.state).toBe("partial")
    expect(job.counts).toMatchObject({ files_unreadable: 1, files_imported: 1 })
    expect(job.error).toContain(`${fifo}: is a FIFO (named pipe), not a regular file`)

    // Given to `blctx index`, it ends promptly too, with one JSON document, and nothing is left running.
    const cli = await runBounded(h, ["index", fifo, "--wait", "--json"], 120_000)
    expect(cli.timedOut).toBe(false)
    expect(`${cli.stdout}${cli.stderr}`).toMatch(/FIFO|not a regular file/)
    oneDocument(cli)
    expect(query(h, "SELECT id FROM jobs WHERE state IN ('queued', 'running')")).toEqual([])

    const later = await indexJson(h, [transcript(dir, "session-2.jsonl")])
    expect(later.job.state).toBe("completed")
    expect(later.job.counts).toMatchObject({ files_imported: 1 })
  })

  it("a hostile tree under --root: a link to a secret named like a transcript is never read, NUL bytes and invalid UTF-8 cost only their lines, a 100 MB line is skipped in bounded memory", async () => {
    const h = makeDaemonHome("detached")
    homes.push(h)
    await installService(h)
    const dir = NodePath.join(h.codexHome, "sessions", "2026", "03", "01")
    const good = transcript(dir, "session-1.jsonl")

    // A secret outside every transcript root, linked from inside one under a transcript's name.
    const secret = NodePath.join(h.home, "private", "notes.jsonl")
    Fs.mkdirSync(NodePath.dirname(secret), { recursive: true })
    const fixtureLines = Fs.readFileSync(NodePath.join(history, "session-2.jsonl"), "utf8").split("\n")
    Fs.writeFileSync(secret, fixtureLines.map((l) => l.replace(/deploy/g, "LINKEDSECRETMARKER")).join("\n"))
    Fs.symlinkSync(secret, NodePath.join(dir, "rollout-2026-03-01T10-00-00-linked.jsonl"))

    // NUL bytes and invalid UTF-8: inside a message's text, and as a line of their own.
    const binary = NodePath.join(dir, "rollout-2026-03-01T11-00-00-binary.jsonl")
    const third = Fs.readFileSync(NodePath.join(history, "session-3.jsonl"))
    const garbage = Buffer.from([0x00, 0xff, 0xfe, 0xc3, 0x28, 0x0a])
    const nulInText = Buffer.from(
      `${JSON.stringify({
        timestamp: "2026-03-01T11:00:05.000Z",
        type: "event_msg",
        payload: { type: "agent_message", message: "binarycheck before\u0000after", phase: "commentary" }
      })}\n`
    )
    Fs.writeFileSync(binary, Buffer.concat([third, Buffer.from("\n"), garbage, nulInText]))

    // One line of 100 MB (a tool output that never ends), between good lines.
    const huge = NodePath.join(dir, "rollout-2026-03-01T12-00-00-huge.jsonl")
    const fourth = Fs.readFileSync(NodePath.join(history, "session-4.jsonl"), "utf8").split("\n")
    const fd = Fs.openSync(huge, "w")
    try {
      Fs.writeSync(fd, `${fourth.slice(0, 3).join("\n")}\n`)
      Fs.writeSync(
        fd,
        '{"timestamp":"2026-03-01T12:00:01.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":"'
      )
      const block = Buffer.alloc(1024 * 1024, "x")
      for (let i = 0; i < 100; i++) Fs.writeSync(fd, block)
      Fs.writeSync(fd, '"}}\n')
      Fs.writeSync(fd, `${fourth.slice(3).join("\n")}`)
    } finally {
      Fs.closeSync(fd)
    }

    const { result, job } = await indexJson(h, ["--root", h.codexHome])
    expect(result.code, result.stderr).toBeLessThanOrEqual(1)
    expect(["completed", "partial"]).toContain(job.state)
    const files = query(h, "SELECT path FROM source_files").map((r) => String(r.path))
    expect(files).toContain(good)
    expect(files).toContain(binary)
    expect(files).toContain(huge)
    expect(files.some((f) => f.includes("linked") || f === secret)).toBe(false)

    // Nothing of the linked secret, anywhere in the database file.
    expect(Fs.readFileSync(h.database).includes("LINKEDSECRETMARKER")).toBe(false)
    expect(query(h, "SELECT count(*) AS n FROM chunks_fts WHERE chunks_fts MATCH 'LINKEDSECRETMARKER'")).toEqual([
      { n: 0 }
    ])
    // The binary file's readable lines are indexed; the huge file's lines around the giant one too.
    const perFile = (path: string) =>
      Number(
        query(
          h,
          "SELECT count(m.id) AS n FROM messages m JOIN source_files f ON f.id = m.source_file_id WHERE f.path = ?",
          path
        )[0]?.n
      )
    expect(perFile(binary)).toBeGreaterThan(0)
    expect(perFile(huge)).toBeGreaterThan(0)
    expect(query(h, "SELECT count(*) AS n FROM messages WHERE length(text) > 16 * 1024 * 1024")).toEqual([{ n: 0 }])

    // Bounded memory: the daemon never held the 100 MB line.
    const [daemon] = h.daemonPids()
    const hwm = Number(/VmHWM:\s+(\d+)/.exec(Fs.readFileSync(`/proc/${daemon}/status`, "utf8"))?.[1] ?? "0") / 1024
    expect(hwm).toBeLessThan(512)
    const later = await indexJson(h, [good])
    expect(later.job.state).toBe("completed")
    console.log(
      `hostile tree: ${job.state}, ${job.counts.files_imported ?? 0} files imported, ${job.counts.parse_errors ?? 0} unreadable lines, link to a secret never read, daemon peak ${hwm.toFixed(0)} MiB`
    )
  })
})
