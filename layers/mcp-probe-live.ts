import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Duration, Effect, Layer } from "effect"
import { McpProbe, McpProbeFailed, type McpProbeSession, type McpToolAnswer } from "../src/mcp/mcp-probe.js"
import { VERSION } from "../src/version.js"

/** How much of the server's stderr a failure keeps: its last characters, where the reason is. */
const STDERR_TAIL = 2_000

const reasonOf = (e: unknown) => {
  const message = e instanceof Error ? e.message : String(e)
  return message.trim() === "" ? (e instanceof Error ? e.name : "an unnamed error") : message.trim()
}

const textOf = (content: unknown): string =>
  Array.isArray(content)
    ? content
        .filter((b): b is { type: "text"; text: string } => b?.type === "text" && typeof b.text === "string")
        .map((b) => b.text)
        .join("\n")
    : ""

/**
 * The SDK's `Client` over `StdioClientTransport`: the server's stderr is piped and kept (the
 * tail goes into failures), never printed; the whole session, launch to close, runs within the
 * timeout, and the server is closed (stdin, then the process) however the session ends.
 */
export const McpProbeLive = Layer.succeed(
  McpProbe,
  McpProbe.of({
    withSession: (server, timeout, use) =>
      Effect.suspend(() => {
        let stderr = ""
        const tail = () => stderr.slice(-STDERR_TAIL)
        return Effect.gen(function* () {
          const failed = (phase: McpProbeFailed["phase"]) => (e: unknown) =>
            new McpProbeFailed({ phase, reason: reasonOf(e), stderr: tail() })

          const transport = new StdioClientTransport({
            command: server.command,
            args: [...server.args],
            env: { ...getDefaultEnvironment(), ...(server.env ?? {}) },
            cwd: server.cwd ?? "/",
            stderr: "pipe"
          })
          transport.stderr?.on("data", (d: Buffer) => {
            stderr = (stderr + d.toString("utf8")).slice(-4 * STDERR_TAIL)
          })
          const client = new Client({ name: "blctx-installer", version: VERSION })
          const bound = { timeout: Duration.toMillis(timeout) }

          const session = yield* Effect.acquireRelease(
            Effect.tryPromise({
              try: (signal) => client.connect(transport, { ...bound, signal }),
              catch: (e) =>
                // The SDK reports a program that cannot start as a spawn error before any message.
                failed(transport.pid === null ? "launch" : "initialize")(e)
            }),
            () => Effect.promise(() => client.close().catch(() => undefined))
          ).pipe(
            Effect.map(
              (): McpProbeSession => ({
                server: (() => {
                  const v = client.getServerVersion()
                  return v === undefined ? "an unnamed server" : `${v.name} ${v.version}`
                })(),
                listTools: Effect.tryPromise({
                  try: (signal) => client.listTools(undefined, { ...bound, signal }),
                  catch: failed("tools/list")
                }).pipe(Effect.map((r) => r.tools.map((t) => t.name))),
                callTool: (name, args) =>
                  Effect.tryPromise({
                    try: (signal) => client.callTool({ name, arguments: args }, undefined, { ...bound, signal }),
                    catch: failed("tools/call")
                  }).pipe(
                    Effect.map(
                      (r): McpToolAnswer => ({
                        isError: r.isError === true,
                        structured: r.structuredContent,
                        text: textOf(r.content)
                      })
                    )
                  )
              })
            )
          )
          return yield* use(session)
        }).pipe(
          Effect.scoped,
          Effect.timeoutFail({
            duration: timeout,
            onTimeout: () =>
              new McpProbeFailed({
                phase: "timeout",
                reason: `the server did not answer within ${Duration.format(timeout)}`,
                stderr: tail()
              })
          })
        )
      })
  })
)
