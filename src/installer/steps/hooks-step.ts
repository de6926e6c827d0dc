import { randomUUID } from "node:crypto"
import { Effect, Either, Option } from "effect"
import { hookCommandLine } from "../../capture/hook-command.js"
import { HOOK_EVENTS } from "../../capture/hook-event.js"
import {
  addEntries,
  type HookEntry,
  type HooksDocument,
  hasEntry,
  modifiedEntries,
  removeEntries
} from "../../codex/hooks-file.js"
import type { StatEntry } from "../../fs/safe-fs.js"
import { SafeFs } from "../../fs/safe-fs.js"
import type { Manifest } from "../../ownership/manifest.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths } from "../../paths/paths.js"
import { ProgramPaths } from "../../paths/program-paths.js"
import type { AgentIntegration, HooksAgent, HooksApproval, HooksRecord } from "../agents/agent-integration.js"
import { fail, type StepFailure, type StepRun } from "../step.js"
import { captureFindings, describeCapture, fault, type HookFinding, hooksVerdict, waiting } from "./capture-health.js"
import { daemonSession } from "./daemon-session.js"
import { makeHooksManifest } from "./hooks-manifest.js"
import { makeOwnedHooksFile } from "./owned-hooks-file.js"
import { INDEX_STATUS_TIMEOUT } from "./service-health.js"
import { stepWithServices } from "./step-context.js"

const sameEntry = (a: HookEntry, b: HookEntry) => a.event === b.event && a.command === b.command
const sameEntries = (a: ReadonlyArray<HookEntry>, b: ReadonlyArray<HookEntry>) =>
  a.length === b.length && a.every((e) => b.some((f) => sameEntry(e, f)))
/** The `timeout` of blctx's entry under the agent's event name, in the agent's unit (seconds, or Gemini's milliseconds). */
const timeoutOf = (agent: AgentIntegration) => (name: string) =>
  Object.values(agent.hooks.events).find((e) => e.name === name)?.timeout ?? 5
const eventsOf = (entries: ReadonlyArray<{ readonly event: string }>) => entries.map((e) => e.event).join(", ")

/** What a step says when the person declined the agent's hooks. */
export const declinedDetail = (agent: AgentIntegration) =>
  `${agent.hooks.optional} declined (explicit choice recorded at install)`

/** What every part of the step works with: the agent and its hooks file, the manifest, and the commands its messages name. */
interface HooksScope {
  readonly agent: AgentIntegration
  readonly own: HooksAgent
  readonly daemon: Effect.Effect.Success<typeof daemonSession>
  readonly programs: ProgramPaths["Type"]
  readonly paths: Paths
  readonly home: string
  readonly hooksFile: string
  /** The command that retries the install (`blctx install codex --step codex_hooks`). */
  readonly reinstall: string
  /** The command that goes without hooks. */
  readonly decline: string
  readonly doctor: string
  readonly manifest: ReturnType<typeof makeHooksManifest>
  readonly owned: ReturnType<typeof makeOwnedHooksFile>
}

const scopeOf = <R>(agent: AgentIntegration<unknown, unknown, R>) =>
  Effect.gen(function* () {
    const paths = yield* Paths
    const home = agent.homeOf(paths)
    const reinstall = `blctx install ${agent.target} --step ${agent.steps.hooks}`
    const scope: HooksScope = {
      agent,
      own: yield* agent.hooks.agent,
      daemon: yield* daemonSession,
      programs: yield* ProgramPaths,
      paths,
      home,
      hooksFile: agent.hooks.fileOf(home),
      reinstall,
      decline: `blctx install ${agent.target} --no-hooks`,
      doctor: `blctx doctor --step ${agent.steps.hooks}`,
      manifest: makeHooksManifest(yield* ManifestStore, {
        records: agent.hooks.records,
        choice: agent.hooks.choice,
        install: `blctx install ${agent.target}`
      }),
      owned: makeOwnedHooksFile(yield* SafeFs, {
        fileName: agent.hooks.fileName,
        agent: agent.name,
        unparsable: agent.hooks.unparsable,
        reinstall,
        uninstall: `blctx uninstall ${agent.target}`
      })
    }
    return scope
  })

const writeManifest = (s: HooksScope, m: Manifest, records: ReadonlyArray<HooksRecord>) =>
  s.manifest.write(m, { records })

const recordOf = (s: HooksScope, m: Manifest) => s.agent.hooks.records.read(m).find((r) => r.home === s.home)

const withRecord = (s: HooksScope, m: Manifest, record: HooksRecord) => [
  ...s.agent.hooks.records.read(m).filter((r) => r.home !== record.home),
  record
]

/** The entries this installation writes for a generation: the same every time for the same paths. */
const desiredEntries = (s: HooksScope, m: Manifest, generation: string): ReadonlyArray<HookEntry> =>
  HOOK_EVENTS.map((event) => ({
    event: s.agent.hooks.events[event].name,
    command: hookCommandLine(s.programs.node, s.programs.hook, {
      event,
      installationId: m.installation_id,
      generation,
      dataHome: s.paths.dataHome,
      configHome: s.paths.configHome,
      cacheHome: s.paths.cacheHome,
      stateHome: s.paths.stateHome
    })
  }))

/** The handler and its interpreter must exist, or every hook would fail in the agent. */
const checkPrograms = (s: HooksScope) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    for (const program of [s.programs.node, s.programs.hook]) {
      if (!(yield* fs.exists(program))) {
        return yield* fail(
          `${program} does not exist, so ${s.agent.name} could not run blctx's hooks`,
          `Reinstall or rebuild blctx (npm run build in its folder), then run: ${s.reinstall}`
        )
      }
    }
  })

/** blctx's entries in the document as recorded: unchanged, current for this installation, and all still there. */
const checkEntries = (s: HooksScope, m: Manifest, record: HooksRecord, doc: HooksDocument) =>
  Effect.gen(function* () {
    const modified = modifiedEntries(doc, record.entries, m.installation_id)
    if (modified.length > 0) return yield* s.owned.modifiedFailure(record.file, modified, record)
    const desired = desiredEntries(s, m, record.generation)
    if (!sameEntries(record.entries, desired)) {
      return yield* fail(
        `blctx's hooks in ${record.file} run ${record.entries[0]?.command ?? "nothing"} (and the like), not what this installation writes (${desired[0]?.command ?? ""})`,
        `Run: ${s.reinstall}`
      )
    }
    const missing = record.entries.filter((e) => !hasEntry(doc, e))
    if (missing.length > 0) {
      return yield* fail(
        `blctx's ${eventsOf(missing)} hook${missing.length === 1 ? " is" : "s are"} no longer in ${record.file} (removed after install)`,
        `Run: ${s.reinstall}`
      )
    }
  })

/** What blctx's record and the hooks file say, before asking the agent: the record and the entries in place. */
const checkInstalled = (s: HooksScope, m: Manifest, next: string) =>
  Effect.gen(function* () {
    const record = recordOf(s, m)
    if (record === undefined) {
      return yield* fail(
        `blctx's hooks are not installed in ${s.hooksFile}`,
        `Run: ${s.reinstall} (or go without them: ${s.decline})`
      )
    }
    const existing = yield* s.owned.read(record.file, next)
    if (Option.isNone(existing)) {
      return yield* fail(`${record.file} is gone, so ${s.agent.name} runs none of blctx's hooks`, `Run: ${s.reinstall}`)
    }
    yield* checkEntries(s, m, record, existing.value.doc)
    yield* s.own.enabled(existing.value.doc, record.file, s.decline)
    return record
  })

/** The agent's answer about the entries in place: asked where it has approvals, fixed otherwise. */
const approvalOf = (s: HooksScope, record: HooksRecord, next: string): Effect.Effect<HooksApproval, StepFailure> =>
  s.own.approval.asks ? s.own.approval.confirm(record.entries, next) : Effect.succeed(s.own.approval.said)

/** Installed and loaded: blctx's entries in place and current, programs present, the agent's answer said. */
const installedState = (s: HooksScope, m: Manifest) =>
  Effect.gen(function* () {
    const record = yield* checkInstalled(s, m, s.reinstall)
    yield* checkPrograms(s)
    const approval = yield* approvalOf(s, record, s.reinstall)
    return {
      detail: `${record.entries.length} hooks (${eventsOf(record.entries)}) in ${record.file}; ${approval.said}`
    }
  })

/** The document to merge into: the file as it is, or an empty one. */
const currentDocument = (s: HooksScope) =>
  Effect.gen(function* () {
    const existing = yield* s.owned.read(s.hooksFile, s.reinstall)
    yield* s.own.beforeWrite(s.reinstall)
    const doc: HooksDocument = Option.match(existing, { onNone: () => ({ hooks: {} }), onSome: (e) => e.doc })
    return { existing, doc } as const
  })

/** What install starts from, once it may write: programs present, the agent's home there, blctx's entries unchanged. */
const prepareInstall = (s: HooksScope, m: Manifest) =>
  Effect.gen(function* () {
    yield* checkPrograms(s)
    if (!(yield* (yield* SafeFs).exists(s.home))) {
      const missing = s.agent.hooks.missingHome(s.home, s.reinstall)
      return yield* fail(missing.detail, missing.remediation)
    }
    const { existing, doc } = yield* currentDocument(s)
    const record = recordOf(s, m)
    if (record !== undefined) {
      const modified = modifiedEntries(doc, record.entries, m.installation_id)
      if (modified.length > 0) return yield* s.owned.modifiedFailure(s.hooksFile, modified, record)
    }
    return { existing, doc, record } as const
  })

/**
 * The same generation while blctx's entries are in place and current, so a reinstall keeps the
 * person's approval (Codex's trust is a hash of the command); otherwise a new one, and captures
 * of any older hook set are refused.
 */
const generationFor = (s: HooksScope, m: Manifest, record: HooksRecord | undefined, doc: HooksDocument) => {
  const current =
    record !== undefined &&
    record.file === s.hooksFile &&
    sameEntries(record.entries, desiredEntries(s, m, record.generation)) &&
    record.entries.some((e) => hasEntry(doc, e))
  return current ? record.generation : randomUUID()
}

/**
 * Writes the final entries into the file when it does not hold exactly them, taking out blctx's
 * stale ones; returns the manifest as it now is and whether the file changed.
 */
const mergeEntries = (
  s: HooksScope,
  m: Manifest,
  owned: ReadonlyArray<HookEntry>,
  current: { readonly existing: Option.Option<{ readonly entry: StatEntry }>; readonly doc: HooksDocument },
  final: HooksRecord
) =>
  Effect.gen(function* () {
    const desired = final.entries
    const stale = owned.filter((e) => !desired.some((d) => sameEntry(d, e)))
    const changed = stale.some((e) => hasEntry(current.doc, e)) || desired.some((d) => !hasEntry(current.doc, d))
    if (!changed) return { latest: m, changed } as const
    // Recorded first, old and new entries alike: if anything stops us before the file is
    // written, every blctx entry in it is still recognised as blctx's on the next run.
    const union = [...owned, ...desired.filter((d) => !owned.some((o) => sameEntry(o, d)))]
    const latest = yield* writeManifest(s, m, withRecord(s, m, { ...final, entries: union }))
    yield* s.owned.write(
      s.hooksFile,
      addEntries(removeEntries(current.doc, stale), desired, timeoutOf(s.agent)),
      Option.map(current.existing, (e) => e.entry)
    )
    return { latest, changed } as const
  })

const installHooks = (s: HooksScope) =>
  Effect.gen(function* () {
    const m = yield* s.manifest.readActive
    const current = yield* prepareInstall(s, m)
    const { record } = current
    const generation = generationFor(s, m, record, current.doc)
    const final: HooksRecord = {
      home: s.home,
      file: s.hooksFile,
      generation,
      entries: desiredEntries(s, m, generation)
    }
    const { latest, changed } = yield* mergeEntries(s, m, record?.entries ?? [], current, final)
    if (record === undefined || changed || !sameEntries(record.entries, final.entries)) {
      yield* writeManifest(s, latest, withRecord(s, latest, final))
    }
    // Install says what status will say, so the two always agree.
    return yield* installedState(s, yield* s.manifest.readActive)
  }).pipe(Effect.withSpan(`${s.agent.span}Hooks.install`))

const verify = (s: HooksScope) =>
  Effect.gen(function* () {
    if (yield* s.manifest.declined) return { detail: declinedDetail(s.agent) }
    return yield* installedState(s, yield* s.manifest.readActive)
  }).pipe(Effect.withSpan(`${s.agent.span}Hooks.verify`))

/** Doctor's view of the hooks: the agent's answer where it asks approval, blctx's programs otherwise. */
const doctorHooks = (s: HooksScope, m: Manifest) =>
  Effect.flatMap(checkInstalled(s, m, s.doctor), (record) =>
    s.own.approval.asks ? approvalOf(s, record, s.doctor) : Effect.as(checkPrograms(s), s.own.approval.said)
  )

/** What doctor finds of the hooks themselves, with the count it reports. */
const hookFindings = (s: HooksScope, m: Manifest) =>
  Effect.gen(function* () {
    const checked = yield* Effect.either(doctorHooks(s, m))
    if (Either.isLeft(checked)) {
      return {
        findings: [fault(checked.left.detail)],
        remedies: [checked.left.remediation],
        summary: s.agent.hooks.unchecked
      }
    }
    const { pending, summary } = checked.right
    if (pending.length > 0 && s.own.approval.asks) {
      return {
        findings: [waiting(`not trusted yet: ${pending.join(", ")}`)],
        remedies: [s.own.approval.approve],
        summary
      }
    }
    return { findings: [] as Array<HookFinding>, remedies: [] as Array<string>, summary }
  })

/** What doctor finds of the captures, as the daemon counts them, with what it reports of them. */
const captureState = (s: HooksScope, m: Manifest) =>
  Effect.gen(function* () {
    const status = yield* Effect.either(
      s.daemon.session(m, "ContextStatus", INDEX_STATUS_TIMEOUT, (client) => client.ContextStatus())
    )
    if (Either.isLeft(status)) {
      return {
        findings: [fault(`capture status not known: ${status.left.detail}`)],
        remedies: [status.left.remediation],
        captured: ""
      }
    }
    const capture = status.right.capture
    const findings = captureFindings(capture, s.agent.name)
    const remedies =
      findings.length === 0
        ? []
        : [
            `Use ${s.agent.name} as usual (start a session, send a prompt, let it answer, exit) so every hook fires; blctxd indexes captures in the background; if the counts stay, check ${s.daemon.logHint(m)}`
          ]
    return { findings, remedies, captured: describeCapture(capture) }
  })

/**
 * Doctor: red for anything broken (hooks changed or gone, the agent cannot list them, capture
 * errors, the daemon silent). Hooks still awaiting approval, event types not fired yet and
 * captures still queued are where a fresh install stands until the agent is used: green,
 * naming each and what to do.
 */
const diagnose = (s: HooksScope) =>
  Effect.gen(function* () {
    if (yield* s.manifest.declined) return { detail: `${s.agent.hooks.optional} declined: nothing to diagnose` }
    const m = yield* s.manifest.readActive
    const hooks = yield* hookFindings(s, m)
    const captures = yield* captureState(s, m)
    const verdict = hooksVerdict(
      [...hooks.findings, ...captures.findings],
      [...hooks.remedies, ...captures.remedies],
      `${hooks.summary}; ${captures.captured}`
    )
    if (verdict._tag === "Failed") return yield* fail(verdict.detail, verdict.remediation)
    return { detail: verdict.detail }
  }).pipe(Effect.withSpan(`${s.agent.span}Hooks.diagnose`))

/**
 * Removes blctx's exact entries from every hooks file it recorded (so a change of the agent's
 * home orphans nothing), then forgets the records of the files it is done with. An entry
 * someone changed is left in place and its record kept, with a failure saying so.
 */
const removeHooks = (s: HooksScope) =>
  Effect.gen(function* () {
    const manifest = yield* s.manifest.read
    if (Option.isNone(manifest)) return { detail: "nothing to remove: no manifest, so blctx installed no hooks" }
    const m = manifest.value
    const records = s.agent.hooks.records.read(m)
    if (records.length === 0) {
      return { detail: `nothing to remove: blctx has no hooks registered with ${s.agent.name}` }
    }
    const { kept, report } = yield* s.owned.removeRecorded(records, (r) => r.file, m.installation_id)
    if (kept.length !== records.length) yield* writeManifest(s, m, kept)
    return yield* report
  }).pipe(Effect.withSpan(`${s.agent.span}Hooks.remove`))

const decline = (s: HooksScope) =>
  Effect.gen(function* () {
    yield* s.manifest.recordChoice("declined")
    const manifest = yield* s.manifest.read
    const installed = Option.exists(manifest, (m) => s.agent.hooks.records.read(m).length > 0)
    if (!installed) return { detail: declinedDetail(s.agent) }
    // Declining after an install takes blctx's hooks out again.
    const removal = yield* removeHooks(s)
    return { detail: `${declinedDetail(s.agent)}; ${removal.detail}` }
  })

const install = (s: HooksScope, run: StepRun) =>
  Effect.gen(function* () {
    switch (run.hooks) {
      case "decline":
        return yield* decline(s)
      case "install":
        // The latest explicit wish replaces an earlier decline (so status reports what install did) and is remembered: a reinstall at a terminal does not ask again.
        yield* s.manifest.recordChoice("installed")
        return yield* installHooks(s)
      case "default":
        return (yield* s.manifest.declined) ? { detail: declinedDetail(s.agent) } : yield* installHooks(s)
    }
  })

/**
 * The optional lifecycle hooks of an agent (SessionStart, UserPromptSubmit, Stop, SessionEnd:
 * codex_hooks, claude_hooks, gemini_hooks), which run blctx's hook handler so new sessions are captured as they
 * happen and prompts get recalled history. The handler knows which agent it runs for from the
 * generation in its command: the manifest's hooks record holds it.
 *
 * What counts first is the choice recorded in the manifest, so install and a later status always
 * agree: declining is recorded, removes blctx's hooks and passes; asking for them (`--hooks`, yes
 * at the prompt) clears an earlier decline; `default` (nobody asked) keeps an earlier decline and
 * otherwise installs.
 *
 * The hooks live in a file shared with the person (Codex's hooks.json, Claude Code's and Gemini CLI's
 * settings.json): blctx adds one group per event and owns exactly the commands the manifest's
 * record lists (recorded before the file is written, so an interrupted install is retried as
 * blctx's own). Everything else in the file is kept. A file that is a link or unreadable, what the
 * agent's own checks refuse (hooks inline in Codex's config.toml), or a blctx entry someone
 * changed are refused, touching nothing.
 *
 * Where the agent asks a person to approve hooks (Codex: `/hooks`), blctx never writes or
 * bypasses that: it reads the agent's own view and reports pending approval as a pass with what
 * to do.
 */
export const hooksStep = <R>(agent: AgentIntegration<unknown, unknown, R>) =>
  Effect.flatMap(scopeOf(agent), (s) =>
    stepWithServices(
      { id: agent.steps.hooks, title: `${agent.name} lifecycle hooks (optional)`, requires: ["data_directory"] },
      {
        install: (run) => install(s, run),
        verify: () => verify(s),
        diagnose: () => diagnose(s),
        uninstall: () => removeHooks(s)
      }
    )
  )
