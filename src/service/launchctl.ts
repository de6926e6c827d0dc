import { Context, Data, type Effect, Option } from "effect"

/** launchctl failed or refused; carries what it printed. */
export class LaunchctlError extends Data.TaggedError("LaunchctlError")<{
  readonly command: string
  readonly detail: string
}> {}

/** A loaded service as `launchctl print` shows it. */
export interface LaunchdServiceState {
  /** launchd's word for it: `running`, `waiting`, `not running`, … */
  readonly state: string
  readonly pid: Option.Option<number>
}

/**
 * The few `launchctl` verbs blctx uses, on the per-user GUI domain (`gui/<uid>`): the modern
 * bootstrap/bootout interface rather than the deprecated load/unload. Live: the real `launchctl`;
 * tests: a fake that checks every plist it is given and runs the program like launchd would.
 */
export class Launchctl extends Context.Tag("blctx/Launchctl")<
  Launchctl,
  {
    /** `gui/<uid>`: the domain a logged-in user's agents live in. */
    readonly domain: string
    /** `launchctl bootstrap gui/<uid> <plist>`: loads the agent (and runs it, with RunAtLoad). */
    readonly bootstrap: (plistPath: string) => Effect.Effect<void, LaunchctlError>
    /** `launchctl bootout gui/<uid>/<label>`: stops and unloads it; false when it was not loaded. */
    readonly bootout: (label: string) => Effect.Effect<boolean, LaunchctlError>
    /** `launchctl kickstart [-k] gui/<uid>/<label>`: starts it (`-k`: kills a running one first). */
    readonly kickstart: (label: string, restart: boolean) => Effect.Effect<void, LaunchctlError>
    /** `launchctl print gui/<uid>/<label>`: none when launchd does not know the label. */
    readonly print: (label: string) => Effect.Effect<Option.Option<LaunchdServiceState>, LaunchctlError>
  }
>() {}

/** Reads `state = …` and `pid = …` from `launchctl print` output. */
export const parsePrint = (text: string): LaunchdServiceState => {
  const state = /^\s*state = (.+)$/m.exec(text)?.[1]?.trim() ?? "unknown"
  const pid = /^\s*pid = (\d+)$/m.exec(text)?.[1]
  return { state, pid: pid === undefined ? Option.none() : Option.some(Number(pid)) }
}
