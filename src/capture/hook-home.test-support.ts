import { randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import * as v from "valibot"
import { nodeHookFs } from "../../layers/node-hook-fs.js"
import { Binding } from "./binding-store.js"
import { bindingsDirIn, spoolDirIn } from "./capture-paths.js"
import { CaptureRecord } from "./capture-record.js"
import { type HookArgs, hookArgv } from "./hook-command.js"
import type { HookEventName } from "./hook-event.js"
import type { HookFs, ReadChunk } from "./hook-fs.js"
import { isSpoolTempName, SPOOL_RECORD_PATTERN } from "./spool-writer.js"

/**
 * A private temp home for the hook handler: the four XDG roots, blctx's data and state
 * directories (0700, as the data_directory step makes them), a manifest with one hook
 * registration, and helpers to build argv and payloads and to read what was spooled.
 */
export interface HookHome {
  readonly root: string
  readonly args: HookArgs
  readonly argv: (event?: HookEventName, overrides?: Partial<HookArgs>) => ReadonlyArray<string>
  readonly codexHome: string
  readonly dataDir: string
  readonly stateDir: string
  readonly spoolDir: string
  readonly bindingsDir: string
  readonly socketPath: string
  readonly writeManifest: (manifest: unknown) => void
  readonly writeConfig: (config: unknown) => void
  /** Final-named spool files (temp files excluded), decoded; throws on one that does not decode. */
  readonly spooled: () => ReadonlyArray<CaptureRecord>
  readonly spoolEntries: () => ReadonlyArray<string>
  /** Every binding file, decoded; throws on one that is not whole. */
  readonly bindings: () => ReadonlyArray<Binding>
  readonly dispose: () => void
}

export const manifestFor = (
  installationId: string,
  generation: string,
  codexHome: string,
  overrides: Record<string, unknown> = {}
) => ({
  version: 1,
  installation_id: installationId,
  state: "active",
  owned_files: [],
  created_directories: [],
  node: process.execPath,
  cli: "/opt/blctx/dist/bin/blctx.mjs",
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z",
  codex_hooks: [{ codex_home: codexHome, hooks_file: NodePath.join(codexHome, "hooks.json"), generation, entries: [] }],
  ...overrides
})

export const makeHookHome = (): HookHome => {
  // Short, so the daemon socket path stays under the kernel's 108-byte limit.
  const root = Fs.realpathSync(Fs.mkdtempSync(NodePath.join(tmpdir(), "bh-")))
  const xdg = (name: string) => NodePath.join(root, name)
  const args: HookArgs = {
    event: "Stop",
    installationId: randomUUID(),
    generation: randomUUID(),
    dataHome: xdg("d"),
    configHome: xdg("c"),
    cacheHome: xdg("k"),
    stateHome: xdg("s")
  }
  const codexHome = NodePath.join(root, ".codex")
  const dataDir = NodePath.join(args.dataHome, "blctx")
  const stateDir = NodePath.join(args.stateHome, "blctx")
  for (const dir of [dataDir, stateDir, codexHome]) Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  const writeManifest = (manifest: unknown) =>
    Fs.writeFileSync(NodePath.join(stateDir, "installation.json"), JSON.stringify(manifest), { mode: 0o600 })
  writeManifest(manifestFor(args.installationId, args.generation, codexHome))
  const spoolDir = spoolDirIn(dataDir)
  const bindingsDir = bindingsDirIn(dataDir)
  const list = (dir: string) => (Fs.existsSync(dir) ? Fs.readdirSync(dir) : [])
  const decodeFile = <S extends v.GenericSchema>(schema: S, path: string): v.InferOutput<S> =>
    v.parse(schema, JSON.parse(Fs.readFileSync(path, "utf8")))
  return {
    root,
    args,
    argv: (event = "Stop", overrides = {}) => hookArgv({ ...args, event, ...overrides }),
    codexHome,
    dataDir,
    stateDir,
    spoolDir,
    bindingsDir,
    socketPath: NodePath.join(stateDir, "blctxd.sock"),
    writeManifest,
    writeConfig: (config) => {
      Fs.mkdirSync(NodePath.join(args.configHome, "blctx"), { recursive: true, mode: 0o700 })
      Fs.writeFileSync(NodePath.join(args.configHome, "blctx", "config.json"), JSON.stringify(config), { mode: 0o600 })
    },
    spoolEntries: () => list(spoolDir),
    spooled: () =>
      list(spoolDir)
        .filter((name) => !isSpoolTempName(name))
        .map((name) => {
          if (!SPOOL_RECORD_PATTERN.test(name)) throw new Error(`unexpected spool entry ${name}`)
          return decodeFile(CaptureRecord, NodePath.join(spoolDir, name))
        }),
    bindings: () =>
      list(bindingsDir)
        .filter((name) => !isSpoolTempName(name))
        .map((name) => decodeFile(Binding, NodePath.join(bindingsDir, name))),
    dispose: () => Fs.rmSync(root, { recursive: true, force: true })
  }
}

/** A payload as Codex 0.171 sends it for `event`. */
export const payloadFor = (event: HookEventName, home: HookHome, overrides: Record<string, unknown> = {}) => ({
  session_id: "019a0000-0000-7000-8000-000000000001",
  transcript_path: NodePath.join(home.codexHome, "sessions", "2026", "11", "30", "rollout-2026-11-30T10-00-00-x.jsonl"),
  cwd: "/tmp/cx/proj",
  hook_event_name: event,
  model: "gpt-test",
  permission_mode: "bypassPermissions",
  ...(event === "SessionStart" ? { source: "startup" } : {}),
  ...(event === "UserPromptSubmit"
    ? { turn_id: "turn-1", prompt: "what did we decide about the deploy rollout?" }
    : {}),
  ...(event === "Stop" ? { turn_id: "turn-1", stop_hook_active: false, last_assistant_message: "done" } : {}),
  ...(event === "SessionEnd" ? { reason: "other" } : {}),
  ...overrides
})

/**
 * A stdin that yields `text`, in reads of at most the reader's buffer, then ends, or with
 * `keepOpen` never ends (a caller that holds the pipe open).
 */
export const stdinReading = (text: string | Buffer, keepOpen = false): ReadChunk => {
  const bytes = typeof text === "string" ? Buffer.from(text) : text
  let offset = 0
  return (buffer, done) => {
    if (offset >= bytes.length && keepOpen) return
    const read = bytes.copy(buffer, 0, offset)
    offset += read
    setImmediate(() => done(null, read))
  }
}

/** The hook's file system on node:fs, with a stdin that yields `text` (and ends unless `keepOpen`). */
export const stdinOf = (text: string | Buffer, keepOpen = false): HookFs => ({
  ...nodeHookFs,
  stdin: stdinReading(text, keepOpen)
})
