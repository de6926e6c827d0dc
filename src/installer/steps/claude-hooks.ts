import { randomUUID } from "node:crypto"
import { Effect, Either, Option } from "effect"
import { hookCommandLine } from "../../capture/hook-command.js"
import { HOOK_EVENTS, type HookEventName } from "../../capture/hook-event.js"
import {
  CLAUDE_MANAGED_SETTINGS,
  claudeSettingsFile,
  hooksDisabled,
  managedHooksRestriction
} from "../../claude/settings-file.js"
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
import type { ClaudeHooksRegistration, Manifest } from "../../ownership/manifest.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths } from "../../paths/paths.js"
import { ProgramPaths } from "../../paths/program-paths.js"
import { fail, type Step } from "../step.js"
import { captureFindings, describeCapture, fault, type HookFinding, hooksVerdict } from "./capture-health.js"
import { daemonSession } from "./daemon-session.js"
import { makeHooksManifest } from "./hooks-manifest.js"
import { makeOwnedHooksFile } from "./owned-hooks-file.js"
import { INDEX_STATUS_TIMEOUT } from "./service-health.js"

export const CLAUDE_DECLINED_DETAIL = "optional Claude Code hooks declined (explicit choice recorded at install)"

const REINSTALL = "blctx install claude --step claude_hooks"
const DECLINE = "blctx install claude --no-hooks"
const DOCTOR = "blctx doctor --step claude_hooks"

const sameEntry = (a: HookEntry, b: HookEntry) => a.event === b.event && a.command === b.command
const sameEntries = (a: ReadonlyArray<HookEntry>, b: ReadonlyArray<HookEntry>) =>
  a.length === b.length && a.every((e) => b.some((f) => sameEntry(e, f)))
/** Seconds, as Claude Code reads `timeout` (a 2 s hook under timeout 3 finishes; a 4 s one under 1 is cancelled). */
const timeoutOf = (event: string) => HOOK_TIMEOUTS[event as HookEventName] ?? 5
const eventsOf = (entries: ReadonlyArray<{ readonly event: string }>) => entries.map((e) => e.event).join(", ")

/**
 * The optional Claude Code lifecycle hooks (SessionStart, UserPromptSubmit, Stop, SessionEnd),
 * running the same handler as Codex's (`dist/bin/blctx-hook.cjs`) so Claude Code sessions are
 * captured as they happen and prompts get recalled history. The handler knows it runs for Claude
 * Code from the generation in its command: the manifest's `claude_hooks` record holds it.
 *
 * The choice works as codex_hooks' does, recorded apart (`choices.claude_hooks`): declining is
 * recorded, removes blctx's hooks and passes; asking for them clears an earlier decline; `default`
 * keeps an earlier decline and otherwise installs.
 *
 * The hooks live in `<claude home>/settings.json`, Claude Code's user settings, shared with the
 * person: blctx adds one group per event and owns exactly the commands the manifest's
 * `claude_hooks` record lists (recorded before the file is written). Every other setting and hook
 * is kept. A settings.json that is a link, not a regular file, or malformed, and a blctx entry
 * someone changed, are refused, touching nothing.
 *
 * Claude Code asks no approval for hooks in user settings (`claude -p` runs them at once); a
 * settings.json with `"disableAllHooks": true` runs none, which blctx reports and never changes.
 */
export const claudeHooksStep = Effect.gen(function* () {
  const manifests = yield* ManifestStore
  const paths = yield* Paths
  const programs = yield* ProgramPaths
  const fs = yield* SafeFs
  const daemon = yield* daemonSession

  const claudeHome = paths.claudeHome
  const settingsFile = claudeSettingsFile(claudeHome)

  const hooksManifest = makeHooksManifest(manifests, {
    records: "claude_hooks",
    choice: "claude_hooks",
    install: "blctx install claude"
  })
  const { read: readManifest, declined, readActive, recordChoice } = hooksManifest
  const writeManifest = (m: Manifest, records: NonNullable<Manifest["claude_hooks"]>) =>
    hooksManifest.write(m, { records })

  const owned = makeOwnedHooksFile(fs, {
    fileName: "settings.json",
    agent: "Claude Code",
    unparsable: "Claude Code cannot load its settings from it as it is",
    reinstall: REINSTALL,
    uninstall: "blctx uninstall claude"
  })
  const { read: readSettings, write: writeSettings, modifiedFailure } = owned

  const recordOf = (m: Manifest, home: string) => (m.claude_hooks ?? []).find((r) => r.claude_home === home)
  const withRecord = (m: Manifest, record: ClaudeHooksRegistration) => [
    ...(m.claude_hooks ?? []).filter((r) => r.claude_home !== record.claude_home),
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

  /** The handler and its interpreter must exist, or every hook would fail in Claude Code. */
  const checkPrograms = Effect.gen(function* () {
    for (const program of [programs.node, programs.hook]) {
      if (!(yield* fs.exists(program))) {
        return yield* fail(
          `${program} does not exist, so Claude Code could not run blctx's hooks`,
          `Reinstall or rebuild blctx (npm run build in its folder), then run: ${REINSTALL}`
        )
      }
    }
  })

  /** What the administrator's managed settings say of user hooks; an absent or unreadable file says nothing. */
  const managedRestriction = fs.readText(CLAUDE_MANAGED_SETTINGS).pipe(
    Effect.map(managedHooksRestriction),
    Effect.orElseSucceed(() => undefined)
  )

  /** What blctx's record and settings.json say: the record, the entries in place and current, hooks not disabled. */
  const checkInstalled = (m: Manifest, next: string) =>
    Effect.gen(function* () {
      const record = recordOf(m, claudeHome)
      if (record === undefined) {
        return yield* fail(
          `blctx's hooks are not installed in ${settingsFile}`,
          `Run: ${REINSTALL} (or go without them: ${DECLINE})`
        )
      }
      const existing = yield* readSettings(record.settings_file, next)
      if (Option.isNone(existing)) {
        return yield* fail(
          `${record.settings_file} is gone, so Claude Code runs none of blctx's hooks`,
          `Run: ${REINSTALL}`
        )
      }
      const doc = existing.value.doc
      const modified = modifiedEntries(doc, record.entries, m.installation_id)
      if (modified.length > 0) return yield* modifiedFailure(record.settings_file, modified, record)
      const desired = desiredEntries(m, record.generation)
      if (!sameEntries(record.entries, desired)) {
        return yield* fail(
          `blctx's hooks in ${record.settings_file} run ${record.entries[0]?.command ?? "nothing"} (and the like), not what this installation writes (${desired[0]?.command ?? ""})`,
          `Run: ${REINSTALL}`
        )
      }
      const missing = record.entries.filter((e) => !hasEntry(doc, e))
      if (missing.length > 0) {
        return yield* fail(
          `blctx's ${eventsOf(missing)} hook${missing.length === 1 ? " is" : "s are"} no longer in ${record.settings_file} (removed after install)`,
          `Run: ${REINSTALL}`
        )
      }
      const managed = yield* managedRestriction
      if (managed !== undefined) {
        return yield* fail(
          `Claude Code's managed settings (${CLAUDE_MANAGED_SETTINGS}) set "${managed}": true, so it runs none of the hooks in ${record.settings_file}, blctx's included`,
          `Ask whoever manages this machine's Claude Code settings to allow user hooks, or go without them: ${DECLINE}`
        )
      }
      if (hooksDisabled(doc)) {
        return yield* fail(
          `${record.settings_file} sets "disableAllHooks": true, so Claude Code runs none of blctx's hooks`,
          `Remove "disableAllHooks" from ${record.settings_file} (blctx never changes it), or go without the hooks: ${DECLINE}`
        )
      }
      return record
    })

  const installedState = (m: Manifest) =>
    Effect.gen(function* () {
      const record = yield* checkInstalled(m, REINSTALL)
      yield* checkPrograms
      return {
        detail: `${record.entries.length} hooks (${eventsOf(record.entries)}) in ${record.settings_file}; Claude Code runs them without approval`
      }
    })

  const installHooks = Effect.fn("ClaudeHooks.install")(function* () {
    const m = yield* readActive
    yield* checkPrograms
    if (!(yield* fs.exists(claudeHome))) {
      return yield* fail(
        `Claude Code's configuration folder ${claudeHome} does not exist, so there is no Claude Code to add hooks to`,
        `Run Claude Code once (or set CLAUDE_CONFIG_DIR to its folder), then run: ${REINSTALL}`
      )
    }
    const existing = yield* readSettings(settingsFile, REINSTALL)
    const doc: HooksDocument = Option.match(existing, { onNone: () => ({ hooks: {} }), onSome: (e) => e.doc })
    const record = recordOf(m, claudeHome)
    const owned = record?.entries ?? []
    if (record !== undefined) {
      const modified = modifiedEntries(doc, owned, m.installation_id)
      if (modified.length > 0) return yield* modifiedFailure(settingsFile, modified, record)
    }
    // The same generation while blctx's entries are in place and current; otherwise a new one, and
    // captures of any older hook set are refused.
    const current =
      record !== undefined &&
      record.settings_file === settingsFile &&
      sameEntries(record.entries, desiredEntries(m, record.generation)) &&
      record.entries.some((e) => hasEntry(doc, e))
    const generation = current ? record.generation : randomUUID()
    const desired = desiredEntries(m, generation)
    const stale = owned.filter((e) => !desired.some((d) => sameEntry(d, e)))
    const changed = stale.some((e) => hasEntry(doc, e)) || desired.some((d) => !hasEntry(doc, d))
    const final: ClaudeHooksRegistration = {
      claude_home: claudeHome,
      settings_file: settingsFile,
      generation,
      entries: desired
    }
    let latest = m
    if (changed) {
      // Recorded first, old and new entries alike: if anything stops us before the file is
      // written, every blctx entry in it is still recognised as blctx's on the next run.
      const union = [...owned, ...desired.filter((d) => !owned.some((o) => sameEntry(o, d)))]
      latest = yield* writeManifest(m, withRecord(m, { ...final, entries: union }))
      yield* writeSettings(
        settingsFile,
        addEntries(removeEntries(doc, stale), desired, timeoutOf),
        Option.map(existing, (e) => e.entry)
      )
    }
    if (record === undefined || changed || !sameEntries(record.entries, final.entries)) {
      yield* writeManifest(latest, withRecord(latest, final))
    }
    return yield* installedState(yield* readActive)
  })

  const verify = Effect.fn("ClaudeHooks.verify")(function* () {
    if (yield* declined) return { detail: CLAUDE_DECLINED_DETAIL }
    return yield* installedState(yield* readActive)
  })

  /**
   * Doctor: red for anything broken (hooks changed or gone, their programs missing, capture
   * errors, the daemon silent). Event types not fired yet and captures still queued are where a
   * fresh install stands until Claude Code is used: green, naming each and what to do.
   */
  const diagnose = Effect.fn("ClaudeHooks.diagnose")(function* () {
    if (yield* declined) return { detail: "optional Claude Code hooks declined: nothing to diagnose" }
    const m = yield* readActive
    const findings: Array<HookFinding> = []
    const remedies: Array<string> = []
    const hooks = yield* Effect.either(Effect.zipLeft(checkInstalled(m, DOCTOR), checkPrograms))
    if (Either.isLeft(hooks)) {
      findings.push(fault(hooks.left.detail))
      remedies.push(hooks.left.remediation)
    }
    const status = yield* Effect.either(
      daemon.session(m, "ContextStatus", INDEX_STATUS_TIMEOUT, (client) => client.contextStatus())
    )
    let captured = ""
    if (Either.isLeft(status)) {
      findings.push(fault(`capture status not known: ${status.left.detail}`))
      remedies.push(status.left.remediation)
    } else {
      const capture = status.right.capture
      const missing = captureFindings(capture, "Claude Code")
      findings.push(...missing)
      if (missing.length > 0) {
        remedies.push(
          `Use Claude Code as usual (start a session, send a prompt, let it answer, exit) so every hook fires; blctxd indexes captures in the background; if the counts stay, check ${daemon.logHint(m)}`
        )
      }
      captured = describeCapture(capture)
    }
    const verdict = hooksVerdict(findings, remedies, `${HOOK_EVENTS.length} hooks in place; ${captured}`)
    if (verdict._tag === "Failed") return yield* fail(verdict.detail, verdict.remediation)
    return { detail: verdict.detail }
  })

  /**
   * Removes blctx's exact entries from every settings file it recorded (so a change of
   * CLAUDE_CONFIG_DIR orphans nothing), then forgets the records of the files it is done with. An
   * entry someone changed is left in place and its record kept, with a failure saying so.
   */
  const removeHooks = Effect.fn("ClaudeHooks.remove")(function* () {
    const manifest = yield* readManifest
    if (Option.isNone(manifest)) return { detail: "nothing to remove: no manifest, so blctx installed no hooks" }
    const m = manifest.value
    const records = m.claude_hooks ?? []
    if (records.length === 0) return { detail: "nothing to remove: blctx has no hooks registered with Claude Code" }
    const { kept, report } = yield* owned.removeRecorded(records, (r) => r.settings_file, m.installation_id)
    if (kept.length !== records.length) yield* writeManifest(m, kept)
    return yield* report
  })

  const decline = Effect.gen(function* () {
    yield* recordChoice("declined")
    const manifest = yield* readManifest
    const installed = Option.exists(manifest, (m) => (m.claude_hooks ?? []).length > 0)
    if (!installed) return { detail: CLAUDE_DECLINED_DETAIL }
    const removal = yield* removeHooks()
    return { detail: `${CLAUDE_DECLINED_DETAIL}; ${removal.detail}` }
  })

  const step: Step = {
    id: "claude_hooks",
    title: "Claude Code lifecycle hooks (optional)",
    requires: ["data_directory"],
    install: (run) =>
      Effect.gen(function* () {
        switch (run.hooks) {
          case "decline":
            return yield* decline
          case "install":
            yield* recordChoice("installed")
            return yield* installHooks()
          case "default":
            return (yield* declined) ? { detail: CLAUDE_DECLINED_DETAIL } : yield* installHooks()
        }
      }),
    verify: () => verify(),
    diagnose: () => diagnose(),
    uninstall: () => removeHooks()
  }
  return step
})
