import * as Net from "node:net"

/**
 * A tiny stand-in for blctxd's socket: reads @effect/rpc NDJSON frames and answers each Request
 * as `answer` says (a whole line, or nothing at all). Records what it received.
 */
export type Answer = (request: {
  readonly id: string
  readonly tag: string
  readonly payload: unknown
}) => string | undefined

export interface RecallServer {
  readonly received: ReadonlyArray<{ readonly id: string; readonly tag: string; readonly payload: unknown }>
  readonly close: () => Promise<void>
}

export const listenRecallServer = (socketPath: string, answer: Answer): Promise<RecallServer> =>
  new Promise((resolve, reject) => {
    const received: Array<{ id: string; tag: string; payload: unknown }> = []
    const sockets = new Set<Net.Socket>()
    const server = Net.createServer((socket) => {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
      socket.on("error", () => undefined)
      let buffer = ""
      socket.setEncoding("utf8").on("data", (chunk: string) => {
        buffer += chunk
        let newline = buffer.indexOf("\n")
        while (newline !== -1) {
          const frame = JSON.parse(buffer.slice(0, newline)) as {
            _tag: string
            id: string
            tag: string
            payload: unknown
          }
          buffer = buffer.slice(newline + 1)
          newline = buffer.indexOf("\n")
          if (frame._tag !== "Request") continue
          received.push({ id: frame.id, tag: frame.tag, payload: frame.payload })
          const line = answer(frame)
          if (line !== undefined) socket.write(line)
        }
      })
    })
    server.once("error", reject)
    server.listen(socketPath, () =>
      resolve({
        received,
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => done())
          })
      })
    )
  })

export const exitSuccess = (requestId: string, value: unknown) =>
  `${JSON.stringify({ _tag: "Exit", requestId, exit: { _tag: "Success", value } })}\n`

/** A failed `Exit` carrying `error` (by default an error that is not `DaemonBusy`). */
export const exitFailure = (requestId: string, error: unknown = { _tag: "DaemonUnavailable", message: "down" }) =>
  `${JSON.stringify({ _tag: "Exit", requestId, exit: { _tag: "Failure", cause: { _tag: "Fail", error } } })}\n`

/** An answer as blctxd encodes it: two hits, one from a transcript and one from a note. */
export const sampleRecallResponse = {
  query_mode: "hybrid",
  hits: [
    {
      text: "We decided to roll out the deploy behind a flag.\nFirst staging, then 10% of traffic.",
      source: {
        kind: "transcript_span",
        agent: "codex",
        path: "/home/me/.codex/sessions/2026/01/02/rollout-a.jsonl",
        line: 42,
        byte_start: 1000,
        byte_end: 1200
      },
      source_type: "codex_transcript",
      agent: "codex",
      session_id: "019a0000-0000-7000-8000-00000000000a",
      timestamp: "2026-01-02T10:00:00.000Z",
      role: "assistant",
      relevance: 0.81
    },
    {
      text: "Deploy rollout: keep the migration reversible.",
      source: { kind: "note_revision", note_id: "8c0e3a4e-7f53-4d4b-9a36-1b7bb4a4c2f1", revision: 2, revisions: 2 },
      source_type: "authored_update",
      agent: null,
      session_id: null,
      timestamp: null,
      role: "note",
      relevance: 0.6
    }
  ]
}
