import { randomUUID } from "node:crypto"
import { copyFileSync, renameSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { BlctxClient } from "../src/rpc/client.js"
import { checkOf, type DaemonHome, isAlive, makeDaemonHome, waitFor } from "./support/daemon-harness.js"

// The database at its path is the database in use: blctxd notices when the database it holds was
// removed or replaced, refuses writes it could not keep and stops, so the next call starts a fresh
// daemon on what the path holds. One detached-supervisor home; the tests run in order.

const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
const builtClient = NodePath.join(root, "dist", "src", "rpc", "client.js")

const Database = createRequire(import.meta.url)("better-sqlite3") as new (
  file: string
) => { exec(sql: string): void; close(): void }

let h: DaemonHome

beforeAll(async () => {
  h = makeDaemonHome("detached")
  const install = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
  expect(install.code, install.stdout + install.stderr).toBe(0)
}, 180_000)
afterAll(() => h?.dispose())

const withClient = async <A, E>(use: (client: BlctxClient) => Effect.Effect<A, E>) => {
  const { connect } = (await import(builtClient)) as typeof import("../src/rpc/client.js")
  return Effect.runPromise(
    Effect.scoped(Effect.flatMap(connect({ socketPath: h.socketPath, timeout: "30 seconds" }), use))
  )
}

const opened = (client: BlctxClient) => client.OpenSession({ binding_key: randomUUID(), project: "/home/dev/shop" })
const note = (session_id: string, text: string) => ({
  session_id,
  update_id: randomUUID(),
  text,
  tags: ["deploy"],
  kind: "decision" as const
})

/** The one daemon running now. */
const runningDaemon = () => {
  const pids = h.daemonPids()
  expect(pids).toHaveLength(1)
  return pids[0] as number
}

/** Stops the daemon as its service manager would (SIGTERM), waits until it is gone, and starts a new one. */
const restart = async () => {
  const pid = runningDaemon()
  process.kill(pid, "SIGTERM")
  await waitFor("the stopped daemon to be gone", () => (isAlive(pid) ? undefined : true))
  const ping = await h.blctx(["ping", "--json"])
  expect(ping.code, ping.stderr).toBe(0)
}

/** `blctx notes show`, after a restart: what the database at the path holds. */
const shown = async (noteId: string) => {
  const show = await h.blctx(["notes", "show", noteId])
  return { code: show.code, text: show.stdout + show.stderr }
}

describe("blctxd and the database at its path", () => {
  it("data folder deleted under a running daemon: install replaces the daemon, and a confirmed note survives a restart", async () => {
    const old = runningDaemon()
    rmSync(NodePath.dirname(h.database), { recursive: true, force: true })

    const install = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
    expect(install.code, install.stdout + install.stderr).toBe(0)
    expect(checkOf(install.stdout, "data_directory").detail).toContain(`${h.database} is a new, empty one`)
    const service = checkOf(install.stdout, "background_service").detail
    // Never the daemon that held the deleted database said to be running still.
    expect(service).not.toContain(`pid ${old})`)
    expect(service).toMatch(/^(started|restarted) blctxd/)
    expect(checkOf(install.stdout, "service_health").status).toBe("passed")
    await waitFor("the daemon that held the deleted database to be gone", () => (isAlive(old) ? undefined : true))
    expect(runningDaemon()).not.toBe(old)

    const text = "Decided: deploys go blue-green behind the zebra canary gate."
    const logged = await withClient((client) =>
      Effect.flatMap(opened(client), (session) => client.LogUpdate(note(session.session_id, text)))
    )
    expect(logged.revision).toBe(1)
    await restart()
    const after = await shown(logged.note_id)
    expect(after.code, after.text).toBe(0)
    expect(after.text).toContain("zebra canary gate")
  }, 180_000)

  it("database replaced by another file under a running daemon: a write is refused, the daemon stops, the next call gets a fresh one", async () => {
    const ping = await h.blctx(["ping", "--json"])
    expect(ping.code, ping.stderr).toBe(0)
    const old = runningDaemon()
    const session = await withClient(opened)

    // Another copy takes the path (as a restore would): written whole, then moved into place.
    const db = new Database(h.database)
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    copyFileSync(h.database, `${h.database}.restored`)
    renameSync(`${h.database}.restored`, h.database)

    const lost = "Decided: the walrus migration runs on Fridays."
    const refused = await withClient((client) => Effect.flip(client.LogUpdate(note(session.session_id, lost))))
    expect(refused._tag).toBe("DaemonStoreError")
    expect(refused.message).toContain(`replaced by another file at ${h.database}`)
    expect(refused.message).toContain("blctxd is stopping")
    await waitFor("the daemon that held the replaced database to stop", () => (isAlive(old) ? undefined : true))

    // The next call starts a fresh daemon on the database at the path, and what it confirms stays.
    const next = await h.blctx(["ping", "--json"])
    expect(next.code, next.stderr).toBe(0)
    const kept = "Decided: the walrus migration runs on Mondays."
    const logged = await withClient((client) => client.LogUpdate(note(session.session_id, kept)))
    expect(logged.revision).toBe(1)
    expect(runningDaemon()).not.toBe(old)
    await restart()
    expect((await shown(logged.note_id)).text).toContain("Mondays")
    const list = await h.blctx(["notes", "list"])
    expect(list.code, list.stderr).toBe(0)
    expect(list.stdout).toContain("Mondays")
    expect(list.stdout).not.toContain("Fridays")
  }, 180_000)
})
