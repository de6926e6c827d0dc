/**
 * The front of blctx's MCP server: answers the handshake while the full server (effect, the MCP
 * SDK, the daemon client: most of a second to load) is still loading, then hands the session over.
 * Codex sends a turn's first model request without waiting for its MCP servers: a server that has
 * not listed its tools by then is missing from that request, and a call the model makes to it
 * fails. The front answers `initialize`, `tools/list` and `ping` from the table recorded from the
 * full server (`handshake.ts`) at the cost of a bare Node start. The first line it does not know
 * (a tool call, anything malformed or oversized) and everything after it waits for the full
 * server, in order. At the hand-over the full server is given the `initialize` (and `initialized`)
 * the front answered, so it knows its client as if it had answered itself, and its own answer to
 * that replayed request is dropped. Without a table the front answers nothing.
 */
import { PassThrough, type Readable, Writable } from "node:stream"
import { answerId, type HandshakeTable, judgeLine } from "./handshake.js"

/** A longer unfinished line is no handshake: it is left to the full server's bounded transport. */
export const MAX_FRONT_LINE_BYTES = 64 * 1024

/**
 * Input held for the full server before the front stops reading (stdin is paused, so the client
 * waits on the pipe): a client that writes faster than the full server loads cannot grow memory.
 */
export const MAX_HELD_BYTES = 8 * 1024 * 1024

const NEWLINE = Buffer.from("\n")

/** Serves the rest of the session on `input` and `output` (the full server). */
export type Serve = (input: Readable, output: Writable) => void

export interface Front {
  /** Stops answering and runs `serve` on what the client sent and sends from now on. */
  readonly handOver: (serve: Serve) => void
}

/** `output`, less the full server's answers to the requests replayed to it (by id, once each). */
const withoutAnswersTo = (output: Writable, ids: Set<string | number>): Writable =>
  new Writable({
    decodeStrings: false,
    write: (chunk, encoding, callback) => {
      const id = ids.size > 0 ? answerId(String(chunk)) : undefined
      if (id !== undefined && ids.delete(id)) return callback()
      output.write(chunk, encoding, callback)
    }
  })

export const startFront = (input: Readable, output: Writable, table: HandshakeTable | undefined): Front => {
  /** What the full server must read first: the handshake lines the front answered that it must know. */
  const replay: Array<Buffer> = []
  const replayedIds = new Set<string | number>()
  /** What the full server answers: from the first line the front did not, on. */
  const leftOver: Array<Buffer> = []
  let heldBytes = 0
  const holdForFull = (...pieces: ReadonlyArray<Buffer>) => {
    leftOver.push(...pieces)
    for (const piece of pieces) heldBytes += piece.length
    if (heldBytes > MAX_HELD_BYTES) input.pause()
  }
  let partial: Array<Buffer> = []
  let partialBytes = 0
  let answering = table !== undefined
  let ended = false

  const judge = (line: Buffer) => {
    const judged = table === undefined ? undefined : judgeLine(table, line.toString("utf8"))
    if (judged === undefined || judged._tag === "HandOver") {
      answering = false
      holdForFull(line, NEWLINE)
      return
    }
    if (judged._tag === "Answer") output.write(judged.line)
    if (judged._tag === "Replay" || judged.replay) replay.push(line, NEWLINE)
    const id = judged._tag === "Answer" && judged.replay ? answerId(judged.line) : undefined
    if (id !== undefined) replayedIds.add(id)
  }

  const onData = (chunk: Buffer) => {
    let start = 0
    for (let newline = chunk.indexOf(10); answering && newline !== -1; newline = chunk.indexOf(10, start)) {
      judge(Buffer.concat([...partial, chunk.subarray(start, newline)]))
      partial = []
      partialBytes = 0
      start = newline + 1
    }
    const rest = chunk.subarray(start)
    if (!answering) {
      holdForFull(...partial.splice(0), rest)
      return
    }
    partial.push(rest)
    partialBytes += rest.length
    if (partialBytes > MAX_FRONT_LINE_BYTES) {
      answering = false
      holdForFull(...partial.splice(0))
    }
  }
  const onEnd = () => {
    ended = true
  }
  input.on("data", onData)
  input.once("end", onEnd)

  return {
    handOver: (serve) => {
      input.off("data", onData)
      input.off("end", onEnd)
      const relay = new PassThrough()
      for (const piece of [...replay, ...leftOver, ...partial]) relay.write(piece)
      if (ended) relay.end()
      else {
        input.on("error", (error) => relay.destroy(error))
        // Resumes an input paused at MAX_HELD_BYTES; from here the relay's backpressure applies.
        input.pipe(relay)
      }
      serve(relay, withoutAnswersTo(output, replayedIds))
    }
  }
}
