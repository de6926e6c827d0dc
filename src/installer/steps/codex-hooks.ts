import { randomUUID } from "node:crypto"
import { Effect, Either, Option } from "effect"
import toml from "toml"
import { hookCommandLine } from "../../capture/hook-command.js"
import { HOOK_EVENTS, type HookEventName } from "../../capture/hook-event.js"
import { CodexAppServer } from "../../codex/codex-app-server.js"
import { CODEX_INSTALL_COMMAND, type CodexError, codexConfigFile } from "../../codex/codex-cli.js"
import {
  addEntries,
  codexHooksFile,
  HOOK_TIMEOUTS,
  type HookEntry,
  type HooksDocument,
  hasEntry,
  inlineHookEvents,
  modifiedEntries,
  removeEntries
} from "../../codex/hooks-file.js"
import {
  describeTrust,
  disabledEvents,
  type HooksListingJudgement,
  judgeHooksListing,
  listingProblems,
  pendingEvents
} from "../../codex/hooks-listing.js"
import { SafeFs } from "../../fs/safe-fs.js"
import type { CodexHooksRegistration, Manifest } from "../../ownership/manifest.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths } from "../../paths/paths.js"
import { ProgramPaths } from "../../paths/program-paths.js"
import { fail, type Step, type StepFailure } from "../step.js"
import { captureFindings, describeCapture, fault, type HookFinding, hooksVerdict, waiting } from "./capture-health.js"
import { daemonSession } from "./daemon-session.js"
import { makeHooksManifest } from "./hooks-manifest.js"
import { makeOwnedHooksFile } from "./owned-hooks-file.js"
import { INDEX_STATUS_TIMEOUT } from "./service-health.js"

export const DECLINED_DETAIL = "optional hooks declined (explicit choice recorded at install)"
/** What a person does once after install: Codex runs a hook only after they approve it. */
export const APPROVE_HOOKS = "approve on next Codex launch: open /hooks and trust the blctx hooks"

const REINSTALL = "blctx install codex --step codex_hooks"
const DECLINE = "blctx install codex --no-hooks"
const DOCTOR = "blctx doctor --step codex_hooks"

const sameEntry = (a: HookEntry, b: HookEntry) => a.event === b.event && a.command === b.command
const sameEntries = (a: ReadonlyArray<HookEntry>, b: ReadonlyArray<HookEntry>) =>
  a.length === b.length && a.every((e) => b.some((f) => sameEntry(e, f)))
const timeoutOf = (event: string) => HOOK_TIMEOUTS[event as HookEventName] ?? 5
const eventsOf = (entries: ReadonlyArray<{ readonly event: string }>) => entries.map((e) => e.event).join(", ")

/**
 * The optional Codex lifecycle hooks (SessionStart, UserPromptSubmit, Stop, SessionEnd), which
 * run blctx's hook handler so new sessions are captured as they happen.
 *
 * What counts first is the choice recorded in the manifest, so install and a later status always
 * agree: declining is recorded, removes blctx's hooks and passes; asking for them (`--hooks`, yes
 * at the prompt) clears an earlier decline; `default` (nobody asked) keeps an earlier decline and
 * otherwise installs.
 *
 * The hooks live in `$CODEX_HOME/hooks.json`, a file shared with the person: blctx adds one group
 * per event and owns exactly the commands the manifest's `codex_hooks` record lists (recorded
 * before the file is written, so an interrupted install is retried as blctx's own). Everything
 * else in the file is kept. A hooks.json that is a link or unreadable, hooks defined inline in
 * config.toml, or a blctx entry someone changed are refused, touching nothing.
 *
 * Codex runs a hook only once the person trusted it (`/hooks` in Codex, stored in config.toml as
 * `[hooks.state."<key>"]`). blctx never writes or bypasses trust: it reads Codex's own view
 * (`hooks/list`) and reports pending approval as a pass with what to do.
 */
export const codexHooksStep = Effect.gen(function* () {
  const manifests = yield* ManifestStore
  const paths = yield* Paths
  const programs = yield* ProgramPaths
  const fs = yield* SafeFs
  const codex = yield* CodexAppServer
  const daemon = yield* daemonSession

  const codexHome = paths.codexHome
  const hooksFile = codexHooksFile(codexHome)
  const configFile = codexConfigFile(codexHome)

  const hooksManifest = makeHooksManifest(manifests, {
    records: "codex_hooks",
    choice: "hooks",
    install: "blctx install codex"
  })
  const { read: readManifest, declined, readActive, recordChoice } = hooksManifest
  const writeManifest = (m: Manifest, records: NonNullable<Manifest["codex_hooks"]>) =>
    hooksManifest.write(m, { records })

  const owned = makeOwnedHooksFile(fs, {
    fileName: "hooks.json",
    agent: "Codex",
    unparsable: "Codex cannot load any hook from it as it is",
    reinstall: REINSTALL,
    uninstall: "blctx uninstall codex"
  })
  const { read: readHooksFile, write: writeHooks, modifiedFailure } = owned

  const recordOf = (m: Manifest, home: string) => (m.codex_hooks ?? []).find((r) => r.codex_home === home)
  const withRecord = (m: Manifest, record: CodexHooksRegistration) => [
    ...(m.codex_hooks ?? []).filter((r) => r.codex_home !== record.codex_home),
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

  const fromCodex =
    (next: string) =>
    (e: CodexError): StepFailure =>
      e._tag === "CodexNotFound"
        ? fail(
            `${e.message}; blctx asks Codex which hooks it loads and whether they are trusted`,
            `Install Codex: ${CODEX_INSTALL_COMMAND} (or put codex on PATH), then run: ${next}`,
            e._tag
          )
        : fail(e.message, `Fix what codex reports in ${e.codexHome}, then run: ${next}`, e._tag)

  /** The handler and its interpreter must exist, or every hook would fail in Codex. */
  const checkPrograms = Effect.gen(function* () {
    for (const program of [programs.node, programs.hook]) {
      if (!(yield* fs.exists(program))) {
        return yield* fail(
          `${program} does not exist, so Codex could not run blctx's hooks`,
          `Reinstall or rebuild blctx (npm run build in its folder), then run: ${REINSTALL}`
        )
      }
    }
  })

  /** Hook definitions inline in config.toml: Codex would load them beside hooks.json. */
  const inlineDefinitions = Effect.gen(function* () {
    if (Option.isNone(yield* fs.lstat(configFile).pipe(Effect.orElseSucceed(() => Option.none())))) return []
    const text = yield* fs
      .readText(configFile)
      .pipe(
        Effect.mapError((e) => fail(`could not read ${configFile}: ${e.message}`, `Check it, then run: ${REINSTALL}`))
      )
    const parsed = yield* Effect.try({
      try: () => toml.parse(text) as unknown,
      catch: (e) =>
        fail(
          `${configFile} is not valid TOML (${e instanceof Error ? e.message : String(e)}); nothing was changed`,
          `Fix it (Codex cannot read it either), then run: ${REINSTALL}`
        )
    })
    return inlineHookEvents(parsed)
  })

  /** Codex's own view of the entries: each listed under its event and enabled; trust is reported, never required. */
  const confirmWithCodex = (entries: ReadonlyArray<HookEntry>, next: string) =>
    Effect.gen(function* () {
      const listing = yield* codex.listHooks(codexHome, paths.home).pipe(Effect.mapError(fromCodex(next)))
      const judged = judgeHooksListing(listing, entries, hooksFile)
      if (judged.missing.length > 0) {
        const said = listingProblems(listing, hooksFile)
        return yield* fail(
          `Codex does not load blctx's ${eventsOf(judged.missing)} hook${judged.missing.length === 1 ? "" : "s"} from ${hooksFile}${said.length > 0 ? ` (Codex reports: ${said.join("; ")})` : ""}`,
          `Check what Codex reports for its hooks (in Codex: /hooks), then run: ${next}`
        )
      }
      if (judged.disabled.length > 0) {
        return yield* fail(
          `blctx's ${disabledEvents(judged)} hook${judged.disabled.length === 1 ? " is" : "s are"} disabled in Codex, so ${judged.disabled.length === 1 ? "it never runs" : "they never run"}`,
          `Enable ${judged.disabled.length === 1 ? "it" : "them"} in Codex (/hooks), or remove \`enabled = false\` from ${judged.disabled.map((d) => `[hooks.state."${d.hook.key}"]`).join(", ")} in ${configFile}`
        )
      }
      return judged
    })

  /** What blctx's record and hooks.json say, before asking Codex: the record and the entries in place. */
  const checkInstalled = (m: Manifest, next: string) =>
    Effect.gen(function* () {
      const record = recordOf(m, codexHome)
      if (record === undefined) {
        return yield* fail(
          `blctx's hooks are not installed in ${hooksFile}`,
          `Run: ${REINSTALL} (or go without them: ${DECLINE})`
        )
      }
      const existing = yield* readHooksFile(record.hooks_file, next)
      if (Option.isNone(existing)) {
        return yield* fail(`${record.hooks_file} is gone, so Codex runs none of blctx's hooks`, `Run: ${REINSTALL}`)
      }
      const doc = existing.value.doc
      const modified = modifiedEntries(doc, record.entries, m.installation_id)
      if (modified.length > 0) return yield* modifiedFailure(record.hooks_file, modified, record)
      const desired = desiredEntries(m, record.generation)
      if (!sameEntries(record.entries, desired)) {
        return yield* fail(
          `blctx's hooks in ${record.hooks_file} run ${record.entries[0]?.command ?? "nothing"} (and the like), not what this installation writes (${desired[0]?.command ?? ""})`,
          `Run: ${REINSTALL}`
        )
      }
      const missing = record.entries.filter((e) => !hasEntry(doc, e))
      if (missing.length > 0) {
        return yield* fail(
          `blctx's ${eventsOf(missing)} hook${missing.length === 1 ? " is" : "s are"} no longer in ${record.hooks_file} (removed after install)`,
          `Run: ${REINSTALL}`
        )
      }
      return record
    })

  /** Installed and loaded: blctx's entries in place and current, listed by Codex, enabled; trust is said, not required. */
  const installedState = (m: Manifest) =>
    Effect.gen(function* () {
      const record = yield* checkInstalled(m, REINSTALL)
      yield* checkPrograms
      const judged = yield* confirmWithCodex(record.entries, REINSTALL)
      return {
        detail: `${record.entries.length} hooks (${eventsOf(record.entries)}) in ${record.hooks_file}; ${describeTrust(judged)}`
      }
    })

  const installHooks = Effect.fn("CodexHooks.install")(function* () {
    const m = yield* readActive
    yield* checkPrograms
    if (!(yield* fs.exists(codexHome))) {
      return yield* fail(
        `the Codex home ${codexHome} does not exist, so there is no Codex to add hooks to`,
        `Run Codex once (or: blctx install codex, which registers the MCP server first), then run: ${REINSTALL}`
      )
    }
    const existing = yield* readHooksFile(hooksFile, REINSTALL)
    const inline = yield* inlineDefinitions
    if (inline.length > 0) {
      return yield* fail(
        `${configFile} defines hooks inline (${inline.map((e) => `[hooks.${e}]`).join(", ")}); Codex would load them beside ${hooksFile}, so blctx added nothing: consolidate them into hooks.json first`,
        `Move the definitions under [hooks] in ${configFile} into ${hooksFile} (keep [hooks.state.*] where it is: that is Codex's trust), then run: ${REINSTALL}`
      )
    }
    const doc: HooksDocument = Option.match(existing, { onNone: () => ({ hooks: {} }), onSome: (e) => e.doc })
    const record = recordOf(m, codexHome)
    const owned = record?.entries ?? []
    if (record !== undefined) {
      const modified = modifiedEntries(doc, owned, m.installation_id)
      if (modified.length > 0) return yield* modifiedFailure(hooksFile, modified, record)
    }
    // The same generation while blctx's entries are in place and current, so a reinstall keeps the
    // person's approval (trust is a hash of the command); otherwise a new one, and captures of any
    // older hook set are refused.
    const current =
      record !== undefined &&
      record.hooks_file === hooksFile &&
      sameEntries(record.entries, desiredEntries(m, record.generation)) &&
      record.entries.some((e) => hasEntry(doc, e))
    const generation = current ? record.generation : randomUUID()
    const desired = desiredEntries(m, generation)
    const stale = owned.filter((e) => !desired.some((d) => sameEntry(d, e)))
    const changed = stale.some((e) => hasEntry(doc, e)) || desired.some((d) => !hasEntry(doc, d))
    const final: CodexHooksRegistration = { codex_home: codexHome, hooks_file: hooksFile, generation, entries: desired }
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

  const verify = Effect.fn("CodexHooks.verify")(function* () {
    if (yield* declined) return { detail: DECLINED_DETAIL }
    return yield* installedState(yield* readActive)
  })

  /**
   * Doctor: red for anything broken (hooks changed or gone, Codex cannot list them, capture
   * errors, the daemon silent). Hooks still awaiting approval in Codex, event types not fired yet
   * and captures still queued are where a fresh install stands until Codex is used: green, naming
   * each and what to do.
   */
  const diagnose = Effect.fn("CodexHooks.diagnose")(function* () {
    if (yield* declined) return { detail: "optional hooks declined: nothing to diagnose" }
    const m = yield* readActive
    const findings: Array<HookFinding> = []
    const remedies: Array<string> = []
    const hooks = yield* Effect.either(
      Effect.flatMap(checkInstalled(m, DOCTOR), (record) => confirmWithCodex(record.entries, DOCTOR))
    )
    let trusted: HooksListingJudgement | undefined
    if (Either.isLeft(hooks)) {
      findings.push(fault(hooks.left.detail))
      remedies.push(hooks.left.remediation)
    } else {
      trusted = hooks.right
      if (hooks.right.pending.length > 0) {
        findings.push(waiting(`not trusted yet: ${pendingEvents(hooks.right).join(", ")}`))
        remedies.push("Open Codex, run /hooks and trust the blctx hooks")
      }
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
      const missing = captureFindings(capture)
      findings.push(...missing)
      if (missing.length > 0) {
        remedies.push(
          `Use Codex as usual (start a session, send a prompt, let it answer, exit) so every hook fires; blctxd indexes captures in the background; if the counts stay, check ${daemon.logHint(m)}`
        )
      }
      captured = describeCapture(capture)
    }
    const verdict = hooksVerdict(findings, remedies, `${trusted?.trusted.length ?? 0} hooks trusted; ${captured}`)
    if (verdict._tag === "Failed") return yield* fail(verdict.detail, verdict.remediation)
    return { detail: verdict.detail }
  })

  /**
   * Removes blctx's exact entries from every hooks file it recorded (so a change of CODEX_HOME
   * orphans nothing), then forgets the records of the files it is done with. An entry someone
   * changed is left in place and its record kept, with a failure saying so.
   */
  const removeHooks = Effect.fn("CodexHooks.remove")(function* () {
    const manifest = yield* readManifest
    if (Option.isNone(manifest)) return { detail: "nothing to remove: no manifest, so blctx installed no hooks" }
    const m = manifest.value
    const records = m.codex_hooks ?? []
    if (records.length === 0) return { detail: "nothing to remove: blctx has no hooks registered with Codex" }
    const { kept, report } = yield* owned.removeRecorded(records, (r) => r.hooks_file, m.installation_id)
    if (kept.length !== records.length) yield* writeManifest(m, kept)
    return yield* report
  })

  const decline = Effect.gen(function* () {
    yield* recordChoice("declined")
    const manifest = yield* readManifest
    const installed = Option.exists(manifest, (m) => (m.codex_hooks ?? []).length > 0)
    if (!installed) return { detail: DECLINED_DETAIL }
    // Declining after an install takes blctx's hooks out again.
    const removal = yield* removeHooks()
    return { detail: `${DECLINED_DETAIL}; ${removal.detail}` }
  })

  const step: Step = {
    id: "codex_hooks",
    title: "Codex lifecycle hooks (optional)",
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
            return (yield* declined) ? { detail: DECLINED_DETAIL } : yield* installHooks()
        }
      }),
    verify: () => verify(),
    diagnose: () => diagnose(),
    uninstall: () => removeHooks()
  }
  return step
})
