import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { Schema } from "effect"
import * as v from "valibot"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { MAX_QUERY_CHARS } from "../domain/bounded-text.js"
import { PromptRecallRequest, PromptRecallResponse } from "../retrieval/prompt-recall.js"
import { DaemonBusy, daemonBusy } from "../rpc/errors.js"
import { askPromptRecall, promptRecallFrame, RecallAnswer } from "./prompt-recall-client.js"
import { PROMPT_RECALL_BOUNDS } from "./prompt-recall-settings.js"
import { MAX_RECALL_QUERY_CHARS } from "./recall-query.js"
import { exitFailure, exitSuccess, listenRecallServer, sampleRecallResponse } from "./recall-server.test-support.js"

let dir: string
let socketPath: string
beforeEach(() => {
  dir = Fs.mkdtempSync(NodePath.join(tmpdir(), "br-"))
  socketPath = NodePath.join(dir, "d.sock")
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

const request = { prompt: "what did we decide about the deploy?", limit: 3, floor: 0.5 }

describe("the PromptRecall contract, as the hook speaks it", () => {
  it("the frame is an @effect/rpc Request whose payload the daemon's schema decodes", () => {
    const frame = JSON.parse(promptRecallFrame(request))
    expect(frame).toEqual({ _tag: "Request", id: "1", tag: "PromptRecall", payload: request, headers: [] })
    expect(Schema.decodeUnknownSync(PromptRecallRequest)(frame.payload)).toEqual(request)
  })

  it("reads what the daemon encodes", () => {
    const decoded = Schema.decodeUnknownSync(PromptRecallResponse)(sampleRecallResponse)
    const encoded = Schema.encodeSync(PromptRecallResponse)(decoded)
    expect(v.parse(RecallAnswer, JSON.parse(JSON.stringify(encoded)))).toEqual(sampleRecallResponse)
  })

  it("asks within the daemon's bounds", () => {
    expect(MAX_RECALL_QUERY_CHARS).toBe(MAX_QUERY_CHARS)
    const decode = Schema.decodeUnknownEither(PromptRecallRequest)
    const { limit, min_relevance } = PROMPT_RECALL_BOUNDS
    for (const l of [limit.min, limit.max]) expect(decode({ ...request, limit: l })._tag).toBe("Right")
    for (const l of [limit.min - 1, limit.max + 1]) expect(decode({ ...request, limit: l })._tag).toBe("Left")
    for (const f of [min_relevance.min, min_relevance.max]) expect(decode({ ...request, floor: f })._tag).toBe("Right")
  })
})

describe("askPromptRecall", () => {
  it("returns the answer to its request, skipping other lines", async () => {
    const server = await listenRecallServer(
      socketPath,
      (r) =>
        `{"_tag":"Pong"}\n${exitSuccess("99", { query_mode: "lexical", hits: [] })}${exitSuccess(r.id, sampleRecallResponse)}`
    )
    try {
      expect(await askPromptRecall(socketPath, request, 5_000)).toEqual({ ok: true, answer: sampleRecallResponse })
    } finally {
      await server.close()
    }
  })

  it("a failure, a defect, an unreadable answer or a closed connection is no recall", async () => {
    const answers = [
      (id: string) => exitFailure(id),
      () => `${JSON.stringify({ _tag: "Defect", defect: "boom" })}\n`,
      (id: string) => exitSuccess(id, { hits: "many" }),
      () => "not json\n"
    ]
    for (const answer of answers) {
      const server = await listenRecallServer(socketPath, (r) => answer(r.id))
      try {
        expect(await askPromptRecall(socketPath, request, 5_000)).toEqual({ ok: false, reason: "recall_failed" })
      } finally {
        await server.close()
      }
    }
  })

  it("a busy daemon is asked again within the deadline; still busy at the deadline is no recall, not a timeout", async () => {
    const busy = (id: string) => exitFailure(id, Schema.encodeSync(DaemonBusy)(daemonBusy(12, 12)))
    let asked = 0
    const server = await listenRecallServer(socketPath, (r) =>
      ++asked <= 2 ? busy(r.id) : exitSuccess(r.id, sampleRecallResponse)
    )
    try {
      expect(await askPromptRecall(socketPath, request, 5_000)).toEqual({ ok: true, answer: sampleRecallResponse })
      expect(server.received).toHaveLength(3)
    } finally {
      await server.close()
    }
    const alwaysBusy = await listenRecallServer(socketPath, (r) => busy(r.id))
    try {
      expect(await askPromptRecall(socketPath, request, 300)).toEqual({ ok: false, reason: "recall_failed" })
      expect(alwaysBusy.received.length).toBeGreaterThan(1)
    } finally {
      await alwaysBusy.close()
    }
  })

  it("a server that never answers is given up at the deadline", async () => {
    const server = await listenRecallServer(socketPath, () => undefined)
    try {
      expect(await askPromptRecall(socketPath, request, 100)).toEqual({ ok: false, reason: "recall_timeout" })
    } finally {
      await server.close()
    }
  })

  it("no socket is unavailable at once", async () => {
    expect(await askPromptRecall(socketPath, request, 60_000)).toEqual({ ok: false, reason: "recall_unavailable" })
  })
})
