import { spawn } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest"
import type { HookEventName } from "../src/capture/hook-event.js"
import { type HookHome, makeHookHome, payloadFor } from "../src/capture/hook-home.test-support.js"
import { exitSuccess, listenRecallServer, sampleRecallResponse } from "../src/capture/recall-server.test-support.js"

const bin = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..", "dist", "bin")
/** The bundled handler Codex runs: what `npm run build` writes to dist/bin/. */
const handler = NodePath.join(bin, "blctx-hook.cjs")
/** What hooks registered by an earlier blctx run: it runs the same handler. */
const olderEntry = NodePath.join(bin, "blctx-hook.mjs")

interface Run {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs the handler as Codex does: argv, one JSON document on stdin, then waits for it to exit. */
const runHandler = (
  argv: ReadonlyArray<string>,
  stdin: string,
  options: {
    readonly killAfterMs?: number
    readonly nodeArgs?: ReadonlyArray<string>
    readonly env?: NodeJS.ProcessEnv
    /** The file node runs: the handler, unless a test runs another entry. */
    readonly entry?: string
  } = {}
): Promise<Run> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(options.nodeArgs ?? []), options.entry ?? handler, ...argv], {
      cwd: "/",
      stdio: ["pipe", "pipe", "pipe"],
      ...(options.env === undefined ? {} : { env: options.env })
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d
    })
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d
    })
    child.stdin.on("error", () => undefined)
    child.on("error", reject)
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }))
    child.stdin.end(stdin)
    if (options.killAfterMs !== undefined) setTimeout(() => child.kill("SIGKILL"), options.killAfterMs)
  })

const receiptOf = (run: Run) => {
  const lines = run.stderr.split("\n").filter((l) => l !== "")
  expect(lines).toHaveLength(1)
  return lines[0]
}

let home: HookHome
beforeAll(() => {
  if (!existsSync(handler)) throw new Error(`${handler} is missing: run npm run build first`)
})
beforeEach(() => {
  home = makeHookHome()
})
afterEach(() => home.dispose())

const run = (event: HookEventName, payload: unknown) =>
  runHandler(home.argv(event), typeof payload === "string" ? payload : JSON.stringify(payload))

describe("blctx-hook, the bundled handler", () => {
  it("refuses bad input with exit 0, no stdout and one receipt line", async () => {
    const cases: ReadonlyArray<readonly [Promise<Run>, string]> = [
      [run("Stop", "not json"), "blctx-hook: Stop failed bad_payload"],
      [run("Stop", ""), "blctx-hook: Stop failed bad_payload"],
      [run("Stop", payloadFor("Stop", home, { session_id: "" })), "blctx-hook: Stop failed bad_payload"],
      [run("Stop", payloadFor("SessionStart", home)), "blctx-hook: Stop failed event_mismatch"],
      [run("Stop", " ".repeat(2 * 1024 * 1024)), "blctx-hook: Stop failed payload_too_large"],
      [runHandler(["Stop", "--data-home", "relative"], "{}"), "blctx-hook: Stop failed bad_arguments"],
      [runHandler([], ""), "blctx-hook: unknown failed bad_arguments"]
    ]
    for (const [pending, receipt] of cases) {
      const result = await pending
      expect(result.code).toBe(0)
      expect(result.stdout).toBe("")
      expect(receiptOf(result)).toBe(receipt)
    }
    expect(home.spoolEntries()).toEqual([])
  })

  it("SessionStart prints exactly one JSON document; Stop and SessionEnd print nothing", async () => {
    const start = await run("SessionStart", payloadFor("SessionStart", home))
    expect(start.code).toBe(0)
    expect(receiptOf(start)).toBe("blctx-hook: SessionStart captured captured_with_context")
    expect(JSON.parse(start.stdout)).toMatchObject({ hookSpecificOutput: { hookEventName: "SessionStart" } })
    for (const event of ["Stop", "SessionEnd"] as const) {
      const result = await run(event, payloadFor(event, home))
      expect(result).toMatchObject({ code: 0, stdout: "" })
      expect(receiptOf(result)).toBe(`blctx-hook: ${event} captured captured`)
    }
    // A hook registered by an earlier blctx (blctx-hook.mjs) runs the same handler.
    const older = await runHandler(home.argv("Stop"), JSON.stringify(payloadFor("Stop", home)), { entry: olderEntry })
    expect(older).toMatchObject({ code: 0, stdout: "" })
    expect(receiptOf(older)).toBe("blctx-hook: Stop captured captured")
    expect(
      home
        .spooled()
        .map((r) => r.event)
        .sort()
    ).toEqual(["SessionEnd", "SessionStart", "Stop", "Stop"])
  })

  it("a Stop of a bound session loads no module beyond Node's own start-up", async () => {
    // The modules Node loads after a CommonJS preload (which loads none itself: Node's start-up is
    // the same for every process); stdin, stdout and stderr are pipes, as under Codex and Claude Code.
    const listFile = NodePath.join(home.root, "modules.txt")
    const preload = NodePath.join(home.root, "module-list.cjs")
    writeFileSync(
      preload,
      `const { writeFileSync } = require("node:fs")
const before = new Set(process.moduleLoadList)
process.on("exit", () => writeFileSync(${JSON.stringify(listFile)}, process.moduleLoadList.filter((m) => !before.has(m)).join("\\n")))
`
    )
    expect((await run("SessionStart", payloadFor("SessionStart", home))).code).toBe(0)
    const stop = await runHandler(home.argv("Stop"), JSON.stringify(payloadFor("Stop", home)), {
      nodeArgs: ["--require", preload]
    })
    expect(receiptOf(stop)).toBe("blctx-hook: Stop captured captured")
    // Not the ESM loader, streams, sockets, crypto or performance timing: nothing at all.
    expect(
      readFileSync(listFile, "utf8")
        .split("\n")
        .filter((m) => m !== "")
    ).toEqual([])
    expect(
      home
        .spooled()
        .map((r) => r.event)
        .sort()
    ).toEqual(["SessionStart", "Stop"])
  })

  it("50 concurrent first events of one session agree on one binding", async () => {
    const runs = await Promise.all(
      Array.from({ length: 50 }, () => run("SessionStart", payloadFor("SessionStart", home)))
    )
    expect(runs.every((r) => r.code === 0)).toBe(true)
    const [binding, ...others] = home.bindings()
    expect(others).toEqual([])
    for (const r of runs) expect(r.stdout).toContain(binding?.binding_key)
    const records = home.spooled()
    expect(records).toHaveLength(50)
    expect(new Set(records.map((r) => r.binding_key))).toEqual(new Set([binding?.binding_key]))
  })

  it("200 concurrent handlers all exit 0 and lose no event", async () => {
    const runs = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        run("Stop", payloadFor("Stop", home, { session_id: `session-${i % 20}`, turn_id: `turn-${i}` }))
      )
    )
    expect(runs.filter((r) => r.code !== 0)).toEqual([])
    expect(runs.filter((r) => receiptOf(r) !== "blctx-hook: Stop captured captured")).toEqual([])
    const records = home.spooled()
    expect(records).toHaveLength(200)
    expect(new Set(records.map((r) => r.turn_id)).size).toBe(200)
    expect(home.bindings()).toHaveLength(20)
  })

  it("killed at any moment, it leaves only whole records and whole bindings (and temp files the drain ignores)", async () => {
    // How long one run takes here, so the kills spread over the whole of a run.
    const started = Date.now()
    await run("Stop", payloadFor("Stop", home, { session_id: "calibration" }))
    const span = Math.max(20, (Date.now() - started) * 1.5)
    for (let round = 0; round < 6; round++) {
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          runHandler(
            home.argv("SessionStart"),
            JSON.stringify(payloadFor("SessionStart", home, { session_id: `s-${round}-${i % 3}` })),
            { killAfterMs: Math.random() * span }
          )
        )
      )
    }
    // Each final-named file decodes whole (spooled() and bindings() throw on any that does not).
    const records = home.spooled()
    const bindings = home.bindings()
    expect(records.length).toBeGreaterThanOrEqual(1)
    const keys = new Set(bindings.map((b) => b.binding_key))
    for (const record of records) expect(keys.has(record.binding_key)).toBe(true)
    for (const name of home.spoolEntries()) expect(name).toMatch(/^(\d+-\d+-[0-9a-f]+\.json|\..*\.tmp)$/)
  })

  it("prompt recall: hits become cited context; a silent daemon costs only the deadline and prints nothing", async () => {
    // A loaded machine gets time to answer: this half is about what an answer becomes.
    home.writeConfig({ prompt_recall: { deadline_ms: 5_000 } })
    const answering = await listenRecallServer(home.socketPath, (r) => exitSuccess(r.id, sampleRecallResponse))
    try {
      const result = await run("UserPromptSubmit", payloadFor("UserPromptSubmit", home))
      expect(receiptOf(result)).toBe("blctx-hook: UserPromptSubmit captured captured_with_context")
      const context = JSON.parse(result.stdout).hookSpecificOutput.additionalContext as string
      expect(context).toContain("never instructions")
      expect(context).toMatch(/\n<blctx-history nonce="[0-9a-f]{16}" n="1" type="transcript" agent="codex" /)
      expect(context).toContain("rollout-a.jsonl:42")
    } finally {
      await answering.close()
    }

    // Long enough that a loaded machine still connects before it passes (the request is asserted).
    home.writeConfig({ prompt_recall: { deadline_ms: 2_000 } })
    const silent = await listenRecallServer(home.socketPath, () => undefined)
    try {
      const result = await run("UserPromptSubmit", payloadFor("UserPromptSubmit", home))
      expect(result).toMatchObject({ code: 0, stdout: "" })
      expect(receiptOf(result)).toBe("blctx-hook: UserPromptSubmit captured recall_timeout")
      expect(silent.received).toHaveLength(1)
    } finally {
      await silent.close()
    }
    expect(home.spooled()).toHaveLength(2)
  })
})
