import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import * as NodeSocketServer from "@effect/platform-node/NodeSocketServer"
import { RpcGroup, RpcSerialization, RpcServer } from "@effect/rpc"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { InvalidQuery } from "../retrieval/invalid-query.js"
import { type PromptRecallRequest, PromptRecallResponse } from "../retrieval/prompt-recall.js"
import { PromptRecall } from "../rpc/history-protocol.js"
import { askPromptRecall } from "./prompt-recall-client.js"
import { sampleRecallResponse } from "./recall-server.test-support.js"

/**
 * The hook speaks @effect/rpc's NDJSON wire format by hand; here a real RpcServer, serving the
 * daemon's own PromptRecall definition the way blctxd does, answers it.
 */
class Recall extends RpcGroup.make(PromptRecall) {}

let dir: string
beforeEach(() => {
  dir = Fs.mkdtempSync(NodePath.join(tmpdir(), "bw-"))
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

const serve = (
  socketPath: string,
  answer: (payload: PromptRecallRequest) => Effect.Effect<PromptRecallResponse, InvalidQuery>
) =>
  RpcServer.layer(Recall).pipe(
    Layer.provide(Recall.toLayer({ PromptRecall: answer })),
    Layer.provide(RpcServer.layerProtocolSocketServer),
    Layer.provide(RpcSerialization.layerNdjson),
    Layer.provide(NodeSocketServer.layer({ path: socketPath }))
  )

const request = { prompt: "what did we decide about the deploy rollout?", limit: 3, floor: 0.5 }

describe("PromptRecall over a real @effect/rpc socket server", () => {
  it.live("the raw frame is answered with the encoded response", () => {
    const socketPath = NodePath.join(dir, "d.sock")
    const answer = Schema.decodeUnknownSync(PromptRecallResponse)(sampleRecallResponse)
    let asked: unknown
    return Effect.gen(function* () {
      const result = yield* Effect.promise(() => askPromptRecall(socketPath, request, 10_000))
      expect(result).toEqual({ ok: true, answer: sampleRecallResponse })
      expect(asked).toEqual(request)
    }).pipe(
      Effect.provide(
        serve(socketPath, (payload) => {
          asked = payload
          return Effect.succeed(answer)
        })
      )
    )
  })

  it.live("a typed failure is no recall", () => {
    const socketPath = NodePath.join(dir, "d.sock")
    return Effect.gen(function* () {
      const result = yield* Effect.promise(() => askPromptRecall(socketPath, request, 10_000))
      expect(result).toEqual({ ok: false, reason: "recall_failed" })
    }).pipe(
      Effect.provide(serve(socketPath, () => Effect.fail(new InvalidQuery({ reason: "no", remediation: "ask again" }))))
    )
  })
})
