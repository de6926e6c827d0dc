import { Writable } from "node:stream"

/** The two streams the guard rearranges: the process's stdout and stderr. */
export interface StdStreams {
  readonly stdout: NodeJS.WriteStream
  readonly stderr: NodeJS.WriteStream
}

/**
 * Takes stdout for the JSON-RPC stream alone. Returns the one writer that reaches the real
 * stdout (give it to the MCP transport), and from then on sends every other write to stdout to
 * stderr instead: `console.log` in any module (the console writes through `stdout.write`),
 * Effect's default console and loggers, a library's stray `process.stdout.write`. Called before
 * anything else is loaded, so even a module that printed while it was loaded could not corrupt
 * the protocol.
 */
export const claimStdout = (streams: StdStreams): Writable => {
  const { stdout, stderr } = streams
  const protocolWrite = stdout.write.bind(stdout) as (
    chunk: unknown,
    encoding: BufferEncoding,
    callback: (error?: Error | null) => void
  ) => boolean
  stdout.write = ((...args: Parameters<NodeJS.WriteStream["write"]>) =>
    (stderr.write as (...a: typeof args) => boolean)(...args)) as NodeJS.WriteStream["write"]
  return new Writable({
    // Strings pass through as they are (the transport writes UTF-8 JSON lines).
    decodeStrings: false,
    // Backpressure comes from stdout itself: the callback runs once stdout took the chunk.
    write: (chunk, encoding, callback) => {
      protocolWrite(chunk, encoding, (error) => callback(error ?? null))
    }
  })
}
