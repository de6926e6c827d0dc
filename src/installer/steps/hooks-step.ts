import { randomUUID } from "node:crypto"
import { Effect, Either, Option } from "effect"
import { hookCommandLine } from "../../capture/hook-command.js"
import { HOOK_EVENTS, type HookEventName } from "../../capture/hook-event.js"
import {
  addEntries,
  HOOK_TIMEOUTS,
  type HookEntry,
  type HooksDocument,
  hasEntry,
  modifiedEntries,
  removeEntries
} from "../../codex/hooks-file.js"
import { SafeFs } from "../../fs/safe-fs.js"
import type { Manifest } from "../../ownership/manifest.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths } from "../../paths/paths.js"
import { ProgramPaths } from "../../paths/program-paths.js"
import type { AgentIntegration, HooksApproval, HooksRecord } from "../agents/agent-integration.js"
import { fail, type Step, type StepFailure } from "../step.js"
import { captureFindings, describeCapture, fault, type HookFinding, hooksVerdict, waiting } from "./capture-health.js"
import { daemonSession } from "./daemon-session.js"
import { makeHooksManifest } from "./hooks-manifest.js"
import { makeOwnedHooksFile } from "./owned-hooks-file.js"
import { INDEX_STATUS_TIMEOUT } from "./service-health.js"

const sameEntry = (a: HookEntry, b: HookEntry) => a.event === b.event && a.command === b.command
const sameEntries = (a: ReadonlyArray<HookEntry>, b: ReadonlyArray<HookEntry>) =>
  a.length === b.length && a.every((e) => b.some((f) => sameEntry(e, f)))
/** Seconds, as the agents read `timeout` (a 2 s hook under timeout 3 finishes; a 4 s one under 1 is cancelled). */
const timeoutOf = (event: string) => HOOK_TIMEOUTS[event as HookEventName] ?? 5
const eventsOf = (entries: ReadonlyArray<{ readonly event: string }>) => entries.map((e) => e.event).join(", ")

/** What a step says when the person declined the agent's hooks. */
export const declinedDetail = (agent: AgentIntegration) =>
  `${agent.hooks.optional} declined (explicit choice recorded at install)`

/**
 * The optional lifecycle hooks of an agent (SessionStart, UserPromptSubmit, Stop, SessionEnd:
 * codex_hooks, claude_hooks), which run blctx's hook handler so new sessions are captured as they
 * happen and prompts get recalled history. The handler knows which agent it runs for from the
 * generation in its command: the manifest's hooks record holds it.
 *
 * What counts first is the choice recorded in the manifest, so install and a later status always
 * agree: declining is recorded, removes blctx's hooks and passes; asking for them (`--hooks`, yes
 * at the prompt) clears an earlier decline; `default` (nobody asked) keeps an earlier decline and
 * otherwise installs.
 *
 * The hooks live in a file shared with the person (Codex's hooks.json, Claude Code's
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
  Effect.gen(function* () {
    const manifests = yield* ManifestStore
    const paths = yield* Paths
    const programs = yield* ProgramPaths
    const fs = yield* SafeFs
    const own = yield* agent.hooks.agent
    const daemon = yield* daemonSession

    const { hooks } = agent
    const id = agent.steps.hooks
    const REINSTALL = `blctx install ${agent.target} --step ${id}`
    const DECLINE = `blctx install ${agent.target} --no-hooks`
    const DOCTOR = `blctx doctor --step ${id}`
    const DECLINED = declinedDetail(agent)
    const home = agent.homeOf(paths)
    const hooksFile = hooks.fileOf(home)

    const hooksManifest = makeHooksManifest(manifests, {
      records: hooks.records,
      choice: hooks.choice,
      install: `blctx install ${agent.target}`
    })
    const { read: readManifest, declined, readActive, recordChoice } = hooksManifest
    const writeManifest = (m: Manifest, records: ReadonlyArray<HooksRecord>) => hooksManifest.write(m, { records })

    const owned = makeOwnedHooksFile(fs, {
      fileName: hooks.fileName,
      agent: agent.name,
      unparsable: hooks.unparsable,
      reinstall: REINSTALL,
      uninstall: `blctx uninstall ${agent.target}`
    })
    const { read: readHooksFile, write: writeHooks, modifiedFailure } = owned

    const recordOf = (m: Manifest) => hooks.records.read(m).find((r) => r.home === home)
    const withRecord = (m: Manifest, record: HooksRecord) => [
      ...hooks.records.read(m).filter((r) => r.home !== record.home),
      record
    ]

    /** The entries this installation writes for a generation: the same every time for the same paths. */
    const desiredEntries = (m: Manifest, generation: string): ReadonlyArray<HookEntry> =>
      HOOK_EVENTS.map((event) => ({
        event,
        command: hookCommandLine(programs.node, programs.hook, {
          event,
          installationId: m.installation_id,
          generation,
          dataHome: paths.dataHome,
          configHome: paths.configHome,
          cacheHome: paths.cacheHome,
          stateHome: paths.stateHome
        })
      }))

    /** The handler and its interpreter must exist, or every hook would fail in the agent. */
    const checkPrograms = Effect.gen(function* () {
      for (const program of [programs.node, programs.hook]) {
        if (!(yield* fs.exists(program))) {
          return yield* fail(
            `${program} does not exist, so ${agent.name} could not run blctx's hooks`,
            `Reinstall or rebuild blctx (npm run build in its folder), then run: ${REINSTALL}`
          )
        }
      }
    })

    /** What blctx's record and the hooks file say, before asking the agent: the record and the entries in place. */
    const checkInstalled = (m: Manifest, next: string) =>
      Effect.gen(function* () {
        const record = recordOf(m)
        if (record === undefined) {
          return yield* fail(
            `blctx's hooks are not installed in ${hooksFile}`,
            `Run: ${REINSTALL} (or go without them: ${DECLINE})`
          )
        }
        const existing = yield* readHooksFile(record.file, next)
        if (Option.isNone(existing)) {
          return yield* fail(`${record.file} is gone, so ${agent.name} runs none of blctx's hooks`, `Run: ${REINSTALL}`)
        }
        const doc = existing.value.doc
        const modified = modifiedEntries(doc, record.entries, m.installation_id)
        if (modified.length > 0) return yield* modifiedFailure(record.file, modified, record)
        const desired = desiredEntries(m, record.generation)
        if (!sameEntries(record.entries, desired)) {
          return yield* fail(
            `blctx's hooks in ${record.file} run ${record.entries[0]?.command ?? "nothing"} (and the like), not what this installation writes (${desired[0]?.command ?? ""})`,
            `Run: ${REINSTALL}`
          )
        }
        const missing = record.entries.filter((e) => !hasEntry(doc, e))
        if (missing.length > 0) {
          return yield* fail(
            `blctx's ${eventsOf(missing)} hook${missing.length === 1 ? " is" : "s are"} no longer in ${record.file} (removed after install)`,
            `Run: ${REINSTALL}`
          )
        }
        yield* own.enabled(doc, record.file, DECLINE)
        return record
      })

    /** The agent's answer about the entries in place: asked where it has approvals, fixed otherwise. */
    const approvalOf = (record: HooksRecord, next: string): Effect.Effect<HooksApproval, StepFailure> =>
      own.approval.asks ? own.approval.confirm(record.entries, next) : Effect.succeed(own.approval.said)

    /** Installed and loaded: blctx's entries in place and current, programs present, the agent's answer said. */
    const installedState = (m: Manifest) =>
      Effect.gen(function* () {
        const record = yield* checkInstalled(m, REINSTALL)
        yield* checkPrograms
        const approval = yield* approvalOf(record, REINSTALL)
        return {
          detail: `${record.entries.length} hooks (${eventsOf(record.entries)}) in ${record.file}; ${approval.said}`
        }
      })

    /** The document to merge into: the file as it is, or an empty one. */
    const currentDocument = Effect.gen(function* () {
      const existing = yield* readHooksFile(hooksFile, REINSTALL)
      yield* own.beforeWrite(REINSTALL)
      const doc: HooksDocument = Option.match(existing, { onNone: () => ({ hooks: {} }), onSome: (e) => e.doc })
      return { existing, doc } as const
    })

    const installHooks = Effect.fn(`${agent.span}Hooks.install`)(function* () {
      const m = yield* readActive
      yield* checkPrograms
      if (!(yield* fs.exists(home))) {
        const missing = hooks.missingHome(home, REINSTALL)
        return yield* fail(missing.detail, missing.remediation)
      }
      const { existing, doc } = yield* currentDocument
      const record = recordOf(m)
      const owned = record?.entries ?? []
      if (record !== undefined) {
        const modified = modifiedEntries(doc, owned, m.installation_id)
        if (modified.length > 0) return yield* modifiedFailure(hooksFile, modified, record)
      }
      // The same generation while blctx's entries are in place and current, so a reinstall keeps the
      // person's approval (Codex's trust is a hash of the command); otherwise a new one, and
      // captures of any older hook set are refused.
      const current =
        record !== undefined &&
        record.file === hooksFile &&
        sameEntries(record.entries, desiredEntries(m, record.generation)) &&
        record.entries.some((e) => hasEntry(doc, e))
      const generation = current ? record.generation : randomUUID()
      const desired = desiredEntries(m, generation)
      const stale = owned.filter((e) => !desired.some((d) => sameEntry(d, e)))
      const changed = stale.some((e) => hasEntry(doc, e)) || desired.some((d) => !hasEntry(doc, d))
      const final: HooksRecord = { home, file: hooksFile, generation, entries: desired }
      let latest = m
      if (changed) {
        // Recorded first, old and new entries alike: if anything stops us before the file is
        // written, every blctx entry in it is still recognised as blctx's on the next run.
        const union = [...owned, ...desired.filter((d) => !owned.some((o) => sameEntry(o, d)))]
        latest = yield* writeManifest(m, withRecord(m, { ...final, entries: union }))
        yield* writeHooks(
          hooksFile,
          addEntries(removeEntries(doc, stale), desired, timeoutOf),
          Option.map(existing, (e) => e.entry)
        )
      }
      if (record === undefined || changed || !sameEntries(record.entries, final.entries)) {
        yield* writeManifest(latest, withRecord(latest, final))
      }
      // Install says what status will say, so the two always agree.
      return yield* installedState(yield* readActive)
    })

    const verify = Effect.fn(`${agent.span}Hooks.verify`)(function* () {
      if (yield* declined) return { detail: DECLINED }
      return yield* installedState(yield* readActive)
    })

    /** Doctor's view of the hooks: the agent's answer where it asks approval, blctx's programs otherwise. */
    const doctorHooks = (m: Manifest) =>
      Effect.flatMap(checkInstalled(m, DOCTOR), (record) =>
        own.approval.asks ? approvalOf(record, DOCTOR) : Effect.as(checkPrograms, own.approval.said)
      )

    /**
     * Doctor: red for anything broken (hooks changed or gone, the agent cannot list them, capture
     * errors, the daemon silent). Hooks still awaiting approval, event types not fired yet and
     * captures still queued are where a fresh install stands until the agent is used: green,
     * naming each and what to do.
     */
    const diagnose = Effect.fn(`${agent.span}Hooks.diagnose`)(function* () {
      if (yield* declined) return { detail: `${hooks.optional} declined: nothing to diagnose` }
      const m = yield* readActive
      const findings: Array<HookFinding> = []
      const remedies: Array<string> = []
      const checked = yield* Effect.either(doctorHooks(m))
      let summary = hooks.unchecked
      if (Either.isLeft(checked)) {
        findings.push(fault(checked.left.detail))
        remedies.push(checked.left.remediation)
      } else {
        summary = checked.right.summary
        if (checked.right.pending.length > 0 && own.approval.asks) {
          findings.push(waiting(`not trusted yet: ${checked.right.pending.join(", ")}`))
          remedies.push(own.approval.approve)
        }
      }
      const status = yield* Effect.either(
        daemon.session(m, "ContextStatus", INDEX_STATUS_TIMEOUT, (client) => client.ContextStatus())
      )
      let captured = ""
      if (Either.isLeft(status)) {
        findings.push(fault(`capture status not known: ${status.left.detail}`))
        remedies.push(status.left.remediation)
      } else {
        const capture = status.right.capture
        const missing = captureFindings(capture, agent.name)
        findings.push(...missing)
        if (missing.length > 0) {
          remedies.push(
            `Use ${agent.name} as usual (start a session, send a prompt, let it answer, exit) so every hook fires; blctxd indexes captures in the background; if the counts stay, check ${daemon.logHint(m)}`
          )
        }
        captured = describeCapture(capture)
      }
      const verdict = hooksVerdict(findings, remedies, `${summary}; ${captured}`)
      if (verdict._tag === "Failed") return yield* fail(verdict.detail, verdict.remediation)
      return { detail: verdict.detail }
    })

    /**
     * Removes blctx's exact entries from every hooks file it recorded (so a change of the agent's
     * home orphans nothing), then forgets the records of the files it is done with. An entry
     * someone changed is left in place and its record kept, with a failure saying so.
     */
    const removeHooks = Effect.fn(`${agent.span}Hooks.remove`)(function* () {
      const manifest = yield* readManifest
      if (Option.isNone(manifest)) return { detail: "nothing to remove: no manifest, so blctx installed no hooks" }
      const m = manifest.value
      const records = hooks.records.read(m)
      if (records.length === 0) return { detail: `nothing to remove: blctx has no hooks registered with ${agent.name}` }
      const { kept, report } = yield* owned.removeRecorded(records, (r) => r.file, m.installation_id)
      if (kept.length !== records.length) yield* writeManifest(m, kept)
      return yield* report
    })

    const decline = Effect.gen(function* () {
      yield* recordChoice("declined")
      const manifest = yield* readManifest
      const installed = Option.exists(manifest, (m) => hooks.records.read(m).length > 0)
      if (!installed) return { detail: DECLINED }
      // Declining after an install takes blctx's hooks out again.
      const removal = yield* removeHooks()
      return { detail: `${DECLINED}; ${removal.detail}` }
    })

    const step: Step = {
      id,
      title: `${agent.name} lifecycle hooks (optional)`,
      requires: ["data_directory"],
      install: (run) =>
        Effect.gen(function* () {
          switch (run.hooks) {
            case "decline":
              return yield* decline
            case "install":
              // The latest explicit wish replaces an earlier decline (so status reports what install did) and is remembered: a reinstall at a terminal does not ask again.
              yield* recordChoice("installed")
              return yield* installHooks()
            case "default":
              return (yield* declined) ? { detail: DECLINED } : yield* installHooks()
          }
        }),
      verify: () => verify(),
      diagnose: () => diagnose(),
      uninstall: () => removeHooks()
    }
    return step
  })
