import { DateTime, Effect, Option } from "effect"
import type { AgentTarget } from "../../domain/step-id.js"
import { type HooksDecision, Manifest } from "../../ownership/manifest.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import type { HooksRecord } from "../agents/agent-integration.js"
import { AGENTS } from "../agents/agents.js"
import type { RecordList } from "../agents/manifest-records.js"
import { fail } from "../step.js"
import { stepManifest } from "./step-manifest.js"

/**
 * What the person already answered about a target's hooks: the choice install recorded, or, for
 * an installation older than that record, hooks blctx registered (they were wanted). None when
 * nobody was asked yet, and only then does install ask at a terminal.
 */
export const answeredHooks = (manifest: Option.Option<Manifest>, target: AgentTarget): Option.Option<HooksDecision> =>
  Option.flatMap(manifest, (m) => {
    const { hooks } = AGENTS[target]
    const choice = m.choices[hooks.choice]
    if (choice !== undefined) return Option.some(choice)
    return hooks.records.read(m).length > 0 ? Option.some("installed" as const) : Option.none()
  })

/** The recorded answer about a target's hooks; an unreadable manifest counts as none (the data step reports it). */
export const readAnsweredHooks = (target: AgentTarget) =>
  Effect.flatMap(ManifestStore, (manifests) =>
    manifests.read().pipe(
      Effect.orElseSucceed(() => Option.none<Manifest>()),
      Effect.map((m) => answeredHooks(m, target))
    )
  )

/** Where it keeps the person's choice (`declined`, or nothing). */
type ChoiceKey = keyof Manifest["choices"]

export interface HooksManifestOptions {
  readonly records: RecordList<HooksRecord>
  readonly choice: ChoiceKey
  /** The command that installs this agent's target, named when there is no active installation. */
  readonly install: string
}

/**
 * The manifest as the hooks steps (codex_hooks, claude_hooks, gemini_hooks) use it: the same reads, the same
 * refusals, and one write that replaces the step's own registrations and choice and nothing else.
 * Each step keeps its records and its choice under its own keys, so one agent's hooks never touch
 * the other's.
 */
export const makeHooksManifest = (
  manifests: ManifestStore,
  { records: list, choice: choiceKey, install }: HooksManifestOptions
) => {
  const { read, readActive } = stepManifest(manifests, install)

  /** True when the person declined these hooks (recorded at install). */
  const declined = Effect.map(
    read,
    Option.exists((m) => m.choices[choiceKey] === "declined")
  )

  /** Writes `m` with new choices and/or registrations; an empty list of registrations drops the key. */
  const write = (
    m: Manifest,
    changes: { readonly choices?: Manifest["choices"]; readonly records?: ReadonlyArray<HooksRecord> }
  ) =>
    Effect.gen(function* () {
      const fields = list.with(
        {
          ...m,
          ...(changes.choices === undefined ? {} : { choices: changes.choices }),
          updated_at: DateTime.formatIso(yield* DateTime.now)
        },
        changes.records ?? list.read(m)
      )
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
