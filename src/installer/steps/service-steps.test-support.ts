import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { afterEach, beforeEach } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { NodeSafeFsLive } from "../../../layers/node-safe-fs.js"
import { InstallationId } from "../../domain/installation-id.js"
import { MANIFEST_VERSION, Manifest } from "../../ownership/manifest.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths, type ResolvedPaths, resolvePaths } from "../../paths/paths.js"
import { ProgramPaths } from "../../paths/program-paths.js"
import type { BlctxClient } from "../../rpc/client.js"
import { DaemonConnector } from "../../rpc/daemon-connector.js"
import { DaemonUnavailable } from "../../rpc/errors.js"
import { type FakeAnswers, fakeDaemonClient } from "../../rpc/fake-daemon.test-support.js"
import { DaemonIdentity } from "../../rpc/protocol.js"
import { ServiceManager, type ServiceStatus } from "../../service/service-manager.js"
import type { ServiceSpec } from "../../service/service-spec.js"
import { CURRENT_SCHEMA_VERSION } from "../../store/migrations.js"
import type { Step, StepOutcome, StepRun } from "../step.js"

/** Test support for the steps that talk to the daemon: an isolated home, a fake daemon, a fake supervisor. */

export const INSTALLATION = InstallationId.make("6f1c8f5e-3b1a-4c2d-9e7f-0a1b2c3d4e5f")

export const makeHome = () => Fs.realpathSync(Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-steps-")))

export const pathInputs = (home: string) => ({
  home,
  XDG_DATA_HOME: NodePath.join(home, "data"),
  XDG_CONFIG_HOME: NodePath.join(home, "config"),
  XDG_CACHE_HOME: NodePath.join(home, "cache"),
  XDG_STATE_HOME: NodePath.join(home, "state"),
  CODEX_HOME: NodePath.join(home, "codex")
})

/** Creates the private directories and an active manifest, as data_directory would. */
export const writeActiveManifest = (paths: ResolvedPaths, choices: Manifest["choices"] = {}) => {
  for (const dir of [paths.dataDir, paths.configDir, paths.cacheDir, paths.stateDir]) {
    Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  }
  const manifest = new Manifest({
    version: MANIFEST_VERSION,
    installation_id: INSTALLATION,
    state: "active",
    owned_files: [paths.database, paths.manifest],
    created_directories: [],
    node: process.execPath,
    cli: process.execPath,
    created_at: "2026-03-01T10:00:00.000Z",
    updated_at: "2026-03-01T10:00:00.000Z",
    choices
  })
  Fs.writeFileSync(paths.manifest, `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 })
}

/** What the fake daemon and supervisor share: which daemon runs, and whether it answers. */
export interface FakeWorld {
  /** PID of the running daemon, or null. */
  pid: number | null
  /** Whether the running daemon answers on its socket. */
  answering: boolean
  /** What the supervisor does on install: keep an answering daemon (detached) or always restart (systemd). */
  restartsOnInstall: boolean
  nextPid: number
  /** Overrides for the fake client's calls (ContextStatus, JobStatus, ...). */
  client: FakeAnswers
  /** When set, every protocol session fails with this reason. */
  unavailable: string | null
  /** How many times something asked the supervisor to make sure the daemon runs. */
  ensureRunningCalls: number
}

export const makeWorld = (over: Partial<FakeWorld> = {}): FakeWorld => ({
  pid: null,
  answering: false,
  restartsOnInstall: false,
  nextPid: 101,
  client: {},
  unavailable: null,
  ensureRunningCalls: 0,
  ...over
})

export const identityOf = (paths: ResolvedPaths, pid: number) =>
  new DaemonIdentity({
    installation_id: INSTALLATION,
    pid,
    node: process.execPath,
    argv: [],
    version: "0.0.0-test",
    db_path: paths.database,
    schema_version: CURRENT_SCHEMA_VERSION,
    index_state: "empty",
    query_mode: "lexical",
    started_at: "2026-03-01T10:00:00.000Z"
  })

export const FakeConnector = (world: FakeWorld, paths: ResolvedPaths) =>
  Layer.succeed(DaemonConnector, {
    withClient: <A, E, R>(
      options: { readonly socketPath: string },
      use: (client: BlctxClient) => Effect.Effect<A, E, R>
    ): Effect.Effect<A, E | DaemonUnavailable, R> =>
      Effect.suspend((): Effect.Effect<A, E | DaemonUnavailable, R> => {
        if (world.unavailable !== null) {
          return Effect.fail(
            new DaemonUnavailable({ socket: options.socketPath, reason: world.unavailable, remediation: "start it" })
          )
        }
        if (world.pid === null || !world.answering) {
          return Effect.fail(
            new DaemonUnavailable({
              socket: options.socketPath,
              reason: "no socket (the daemon is not running)",
              remediation: "start it",
              not_running: true
            })
          )
        }
        const pid = world.pid
        const answers: FakeAnswers = { Ping: () => identityOf(paths, pid), ...world.client }
        return Effect.scoped(
          Effect.flatMap(fakeDaemonClient(answers, { socketPath: options.socketPath }), ({ client }) => use(client))
        )
      })
  })

export const FakeServiceManager = (world: FakeWorld, description = "fake supervisor (tests)") =>
  Layer.succeed(ServiceManager, {
    kind: "detached",
    description,
    install: (_spec: ServiceSpec) =>
      Effect.sync(() => {
        if (world.pid !== null && world.answering && !world.restartsOnInstall) return
        world.pid = world.nextPid++
        world.answering = true
      }),
    ensureRunning: () =>
      Effect.sync(() => {
        world.ensureRunningCalls++
        if (world.pid !== null && world.answering) return
        world.pid = world.nextPid++
        world.answering = true
      }),
    status: (spec: ServiceSpec) =>
      Effect.succeed<ServiceStatus>({
        unitPath: NodePath.join(spec.stateDir, "unit"),
        unitContent: Option.some("unit"),
        expectedUnit: "unit",
        enabled: true,
        active: world.pid !== null,
        mainPid: Option.fromNullable(world.pid),
        commandLine: world.pid === null ? Option.none() : Option.some(spec.command)
      }),
    uninstall: () =>
      Effect.sync(() => {
        world.pid = null
        world.answering = false
      })
  })

/** Paths, SafeFs, ManifestStore, ProgramPaths over the home, plus the fakes. */
export const stepLayer = (home: string, world: FakeWorld) => {
  const paths = resolvePaths(pathInputs(home))
  return Layer.mergeAll(
    ManifestStore.Default,
    Layer.succeed(ProgramPaths, {
      node: process.execPath,
      cli: process.execPath,
      daemon: process.execPath,
      mcp: process.execPath,
      hook: process.execPath,
      skill: process.execPath
    }),
    FakeConnector(world, paths),
    FakeServiceManager(world)
  ).pipe(Layer.provideMerge(Paths.layerFrom(pathInputs(home))), Layer.provideMerge(NodeSafeFsLive))
}

export { runOf } from "../step-run.test-support.js"

/** A step's deeper check (doctor); a test fails loudly when the step has none. */
export const diagnoseOf = (step: Step, run: StepRun): Effect.Effect<StepOutcome, unknown> =>
  step.diagnose === undefined ? Effect.dieMessage(`${step.id} has no diagnose`) : step.diagnose(run)

/**
 * A fresh home with an active manifest around each test of the calling file, removed after it.
 * `home()` and `paths()` read the current test's.
 */
export const useActiveHome = () => {
  let home = ""
  beforeEach(() => {
    home = makeHome()
    writeActiveManifest(resolvePaths(pathInputs(home)))
  })
  afterEach(() => Fs.rmSync(home, { recursive: true, force: true }))
  return { home: () => home, paths: () => resolvePaths(pathInputs(home)) }
}
