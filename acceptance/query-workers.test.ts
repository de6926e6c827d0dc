import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Either, Layer } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { type IsolatedHome, makeIsolatedHome } from "./support/isolated-home.js"

// The daemon's query workers as built: the pool module from dist/, which starts the bundled worker
// program beside it, over a database `blctx install` created.

const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
const built = (path: string) => NodePath.join(root, "dist", path)

const modules = async () => ({
  pool: (await import(built("layers/query-worker-pool.js"))) as typeof import("../layers/query-worker-pool.js"),
  reads: (await import(built("src/rpc/query-reads.js"))) as typeof import("../src/rpc/query-reads.js"),
  paths: (await import(built("src/paths/paths.js"))) as typeof import("../src/paths/paths.js")
})

/** This process's threads (Linux): each query worker is one. */
const threads = () => Number(/^Threads:\s+(\d+)$/m.exec(Fs.readFileSync("/proc/self/status", "utf8"))?.[1])

let home: IsolatedHome | undefined
afterEach(() => {
  if (home !== undefined) Fs.rmSync(home.home, { recursive: true, force: true })
  home = undefined
})

describe("the daemon's query workers", () => {
  it.skipIf(!Fs.existsSync("/proc/self/status"))(
    "start one worker with the daemon; reads that find it busy start the overflow workers, which answer them",
    async () => {
      const h = makeIsolatedHome()
      home = h
      const created = await h.blctx(["install", "codex", "--step", "data_directory", "--json"])
      expect(created.code, created.stdout + created.stderr).toBe(0)
      const { pool, reads, paths } = await modules()
      const PathsLive = paths.Paths.layerFrom({
        home: h.home,
        XDG_DATA_HOME: h.xdg.data,
        XDG_CONFIG_HOME: h.xdg.config,
        XDG_CACHE_HOME: h.xdg.cache,
        XDG_STATE_HOME: h.xdg.state
      })
      const before = threads()
      const seen = await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const context = yield* Layer.build(pool.QueryWorkerPoolLive.pipe(Layer.provide(PathsLive)))
            const started = threads()
            const client = yield* Effect.provide(reads.QueryReads, context)
            // Six at once: the first takes the primary, the others find it busy.
            const answers = yield* Effect.all(
              Array.from({ length: 6 }, () => Effect.either(client.Coverage())),
              { concurrency: "unbounded" }
            )
            return { started, answers, afterReads: threads() }
          })
        )
      )
      expect(seen.started - before, "worker threads started with the pool").toBe(1)
      expect(seen.answers.filter(Either.isLeft)).toEqual([])
      expect(seen.afterReads - before, "worker threads once reads overflowed").toBeGreaterThan(1)
      expect(seen.afterReads - before).toBeLessThanOrEqual(pool.QUERY_WORKERS)
    },
    120_000
  )
})
