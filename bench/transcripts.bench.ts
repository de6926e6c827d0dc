import { execFile } from "node:child_process"
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { Effect } from "effect"
import { NodeTranscriptFilesLive } from "../layers/node-transcript-files.js"
import { makeClassifier } from "../src/transcripts/classify.js"
import { forEachRecord, openTranscript } from "../src/transcripts/reader.js"
import { line, mib } from "./measure.js"

const TARGET_BYTES = 200 * 1024 * 1024
const RSS_BUDGET_BYTES = 150 * 1024 * 1024
const self = fileURLToPath(import.meta.url)

/** A synthetic rollout shaped like real ones: big tool outputs, reasoning, duplicated messages. */
const generate = (path: string) => {
  const fd = openSync(path, "w")
  const pad = (n: number) => "x".repeat(n)
  let written = 0
  let turn = 0
  const put = (value: unknown) => {
    const text = `${JSON.stringify(value)}\n`
    written += writeSync(fd, text)
  }
  const ts = () => new Date(Date.UTC(2026, 2, 1, 0, 0, turn % 60)).toISOString()
  put({
    timestamp: ts(),
    type: "session_meta",
    payload: { id: "bench", cwd: "/home/dev/project", cli_version: "0.120.0", base_instructions: { text: pad(20_000) } }
  })
  while (written < TARGET_BYTES) {
    turn++
    const id = `turn-${turn}`
    const prompt = `Request ${turn}: refactor module ${turn % 97} and run the tests`
    put({ timestamp: ts(), type: "event_msg", payload: { type: "task_started", turn_id: id } })
    put({ timestamp: ts(), type: "turn_context", payload: { turn_id: id, cwd: "/home/dev/project", model: "gpt-5" } })
    put({
      timestamp: ts(),
      type: "response_item",
      payload: { type: "message", role: "user", content: [{ type: "input_text", text: prompt }] }
    })
    put({ timestamp: ts(), type: "event_msg", payload: { type: "user_message", message: prompt } })
    for (let step = 0; step < 6; step++) {
      put({
        timestamp: ts(),
        type: "response_item",
        payload: { type: "reasoning", summary: [], encrypted_content: pad(1_500) }
      })
      put({
        timestamp: ts(),
        type: "response_item",
        payload: { type: "function_call", name: "shell", arguments: pad(300), call_id: `c${turn}-${step}` }
      })
      const output =
        turn % 50 === 0 && step === 0 ? pad(2 * 1024 * 1024) : pad(2_000 + ((turn * 7919 + step * 104729) % 40_000))
      put({
        timestamp: ts(),
        type: "response_item",
        payload: { type: "function_call_output", call_id: `c${turn}-${step}`, output }
      })
      put({ timestamp: ts(), type: "event_msg", payload: { type: "token_count", info: { total: turn * 100 + step } } })
    }
    const answer = `Done with request ${turn}: ${pad(400)}`
    put({
      timestamp: ts(),
      type: "event_msg",
      payload: { type: "agent_message", message: answer, phase: "final_answer" }
    })
    put({
      timestamp: ts(),
      type: "response_item",
      payload: {
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", text: answer }],
        phase: "final_answer"
      }
    })
    put({ timestamp: ts(), type: "event_msg", payload: { type: "task_complete", turn_id: id } })
  }
  closeSync(fd)
}

interface ChildResult {
  readonly records: number
  readonly turns: number
  readonly ms: number
  readonly maxRssBytes: number
}

/** Runs in a fresh process so its peak RSS is the reader's alone. */
const child = async (path: string, mode: "read" | "classify") => {
  const start = process.hrtime.bigint()
  const program = Effect.scoped(
    Effect.gen(function* () {
      const opened = yield* openTranscript(path)
      const classifier = mode === "classify" ? makeClassifier() : null
      let records = 0
      yield* forEachRecord(opened.records, (r) => {
        records++
        classifier?.push(r)
      })
      const turns = classifier === null ? 0 : classifier.finish().totals.turns
      return { records, turns }
    })
  ).pipe(Effect.provide(NodeTranscriptFilesLive))
  const { records, turns } = await Effect.runPromise(program)
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  const result: ChildResult = { records, turns, ms, maxRssBytes: process.resourceUsage().maxRSS * 1024 }
  process.stdout.write(JSON.stringify(result))
}

const measure = async (path: string, mode: "read" | "classify"): Promise<ChildResult> => {
  const { stdout } = await promisify(execFile)(process.execPath, [self, "--transcripts-child", path, mode], {
    maxBuffer: 1024 * 1024
  })
  return JSON.parse(stdout) as ChildResult
}

/** Records/s and peak resident memory reading (and classifying) a 200 MB synthetic transcript. */
export const run = async () => {
  const dir = mkdtempSync(NodePath.join(tmpdir(), "blctx-bench-transcripts-"))
  try {
    const path = NodePath.join(dir, "rollout-bench.jsonl")
    generate(path)
    const size = statSync(path).size
    line("synthetic transcript", mib(size))
    for (const mode of ["read", "classify"] as const) {
      const r = await measure(path, mode)
      const seconds = r.ms / 1000
      line(`${mode}: records/s`, `${Math.round(r.records / seconds).toLocaleString("en-US")} (${r.records} records)`)
      line(`${mode}: throughput`, `${(size / 1024 / 1024 / seconds).toFixed(1)} MiB/s in ${seconds.toFixed(2)} s`)
      const within = r.maxRssBytes < RSS_BUDGET_BYTES ? "within" : "OVER"
      line(`${mode}: peak RSS`, `${mib(r.maxRssBytes)} (${within} the ${mib(RSS_BUDGET_BYTES)} budget)`)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (process.argv[2] === "--transcripts-child") {
  const [path, mode] = process.argv.slice(3)
  await child(path ?? "", mode === "classify" ? "classify" : "read")
}
