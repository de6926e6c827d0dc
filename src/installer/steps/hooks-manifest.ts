import { DateTime, Effect, Option } from "effect"
import type { AgentTarget } from "../../domain/step-id.js"
import { type HooksDecision, Manifest } from "../../ownership/manifest.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { fail } from "../step.js"
import { stepManifest } from "./step-manifest.js"

/** Where each target's hooks step keeps its choice and its registrations. */
const HOOKS_KEYS = {
  codex: { choice: "hooks", records: "codex_hooks" },
  claude: { choice: "claude_hooks", records: "claude_hooks" }
} as const satisfies Record<AgentTarget, { readonly choice: ChoiceKey; readonly records: RecordsKey }>

/**
 * What the person already answered about a target's hooks: the choice install recorded, or, for
 * an installation older than that record, hooks blctx registered (they were wanted). None when
 * nobody was asked yet, and only then does install ask at a terminal.
 */
export const answeredHooks = (manifest: Option.Option<Manifest>, target: AgentTarget): Option.Option<HooksDecision> =>
  Option.flatMap(manifest, (m) => {
    const keys = HOOKS_KEYS[target]
    const choice = m.choices[keys.choice]
    if (choice !== undefined) return Option.some(choice)
    return (m[keys.records] ?? []).length > 0 ? Option.some("installed" as const) : Option.none()
  })

/** The recorded answer about a target's hooks; an unreadable manifest counts as none (the data step reports it). */
export const readAnsweredHooks = (target: AgentTarget) =>
  Effect.flatMap(ManifestStore, (manifests) =>
    manifests.read().pipe(
      Effect.orElseSucceed(() => Option.none<Manifest>()),
      Effect.map((m) => answeredHooks(m, target))
    )
  )

/** Where a hooks step keeps its registrations in the manifest. */
type RecordsKey = "codex_hooks" | "claude_hooks"
/** Where it keeps the person's choice (`declined`, or nothing). */
type ChoiceKey = keyof Manifest["choices"]

export interface HooksManifestOptions<K extends RecordsKey> {
  readonly records: K
  readonly choice: ChoiceKey
  /** The command that installs this agent's target, named when there is no active installation. */
  readonly install: string
}

/**
 * The manifest as the hooks steps (codex_hooks, claude_hooks) use it: the same reads, the same
 * refusals, and one write that replaces the step's own registrations and choice and nothing else.
 * Each step keeps its records and its choice under its own keys, so one agent's hooks never touch
 * the other's.
 */
export const makeHooksManifest = <K extends RecordsKey>(
  manifests: ManifestStore,
  { records: recordsKey, choice: choiceKey, install }: HooksManifestOptions<K>
) => {
  const { read, readActive } = stepManifest(manifests, install)

  /** True when the person declined these hooks (recorded at install). */
  const declined = Effect.map(
    read,
    Option.exists((m) => m.choices[choiceKey] === "declined")
  )

  /** Writes `m` with new choices and/or registrations; an empty list of registrations drops the key. */
  const write = (m: Manifest, changes: { readonly choices?: Manifest["choices"]; readonly records?: Manifest[K] }) =>
    Effect.gen(function* () {
      const { [recordsKey]: current, ...rest } = m
      const records = "records" in changes ? changes.records : current
      // A computed key loses its type in a spread; the Manifest constructor still validates it.
      const fields = {
        ...rest,
        ...(changes.choices === undefined ? {} : { choices: changes.choices }),
        ...(records !== undefined && records.length > 0 ? { [recordsKey]: records } : {}),
        updated_at: DateTime.formatIso(yield* DateTime.now)
      } as ConstructorParameters<typeof Manifest>[0]
      const next = new Manifest(fields)
      yield* manifests
        .write(next)
        .pipe(
          Effect.mapError((e) =>
            fail(`could not record the hooks in ${manifests.path}: ${e.message}`, "Check the state directory.")
          )
        )
      return next
    })

  /** Records the person's choice (`installed` or `declined`), or `undefined` to clear it. */
  const recordChoice = (choice: HooksDecision | undefined) =>
    Effect.gen(function* () {
      const manifest = yield* read
      if (Option.isNone(manifest)) return yield* fail("no manifest to record the choice in", `Run: ${install}`)
      const m = manifest.value
      if (m.choices[choiceKey] === choice) return
      const { [choiceKey]: _previous, ...others } = m.choices
      yield* write(m, { choices: choice === undefined ? others : { ...others, [choiceKey]: choice } })
    })

  return { read, declined, readActive, write, recordChoice } as const
}
