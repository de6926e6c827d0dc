import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger } from "effect"
import { Readiness } from "../src/daemon/readiness.js"
import { makeSystemdNotifyReadiness } from "./systemd-notify-readiness.js"

/** A `systemd-notify` stand-in that appends its arguments to NOTIFY_SOCKET (a file here), or fails. */
const setup = Effect.acquireRelease(
  Effect.sync(() => {
    const dir = mkdtempSync(NodePath.join(tmpdir(), "blctx-notify-"))
    const script = (name: string, body: string) => {
      const path = NodePath.join(dir, name)
      writeFileSync(path, `#!/bin/sh\n${body}\n`)
      chmodSync(path, 0o700)
      return path
    }
    const socket = NodePath.join(dir, "notify")
    writeFileSync(socket, "")
    const previous = process.env.NOTIFY_SOCKET
    process.env.NOTIFY_SOCKET = socket
    return {
      dir,
      previous,
      socket,
      notify: script("systemd-notify", 'echo "$*" >> "$NOTIFY_SOCKET"'),
      broken: script("broken-notify", 'echo "No such socket" >&2; exit 1')
    }
  }),
  ({ dir, previous }) =>
    Effect.sync(() => {
      if (previous === undefined) delete process.env.NOTIFY_SOCKET
      else process.env.NOTIFY_SOCKET = previous
      rmSync(dir, { recursive: true, force: true })
    })
)

const readinessOf = (executable: string) =>
  Effect.provide(Readiness, makeSystemdNotifyReadiness(executable).pipe(Layer.provide(NodeContext.layer)))

describe("systemd-notify readiness (through Command)", () => {
  it.scoped("tells the manager READY=1 with a status, then STOPPING=1", () =>
    Effect.gen(function* () {
      const { socket, notify } = yield* setup
      const readiness = yield* readinessOf(notify)
      yield* readiness.ready("serving on /run/x.sock")
      yield* readiness.stopping
      expect(readFileSync(socket, "utf8")).toBe("--ready --status=serving on /run/x.sock\nSTOPPING=1\n")
    })
  )

  it.scoped("only logs a helper that fails, and runs nothing without NOTIFY_SOCKET", () =>
    Effect.gen(function* () {
      const { socket, broken, notify } = yield* setup
      const logs: Array<string> = []
      const capture = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ message, annotations }) => {
          logs.push(`${String(message)} ${JSON.stringify(Object.fromEntries(annotations))}`)
        })
      )
      yield* (yield* readinessOf(broken)).ready("x").pipe(Effect.provide(capture))
      expect(logs).toEqual(['systemd-notify failed {"error":"No such socket"}'])

      delete process.env.NOTIFY_SOCKET
      yield* (yield* readinessOf(notify)).ready("x")
      expect(readFileSync(socket, "utf8")).toBe("")
    })
  )
})
