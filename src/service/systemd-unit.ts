import { Duration } from "effect"
import type { ServiceSpec } from "./service-spec.js"
import { SHUTDOWN_LIMIT, SUPERVISOR_START_WAIT } from "./start-bounds.js"

/** Quotes one ExecStart word for systemd: double quotes, with `\`, `"`, `%` and `$` escaped. */
export const quoteWord = (word: string) =>
  `"${word.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("%", "%%").replaceAll("$", "$$$$")}"`

/**
 * Quotes one `Environment=` assignment: like `quoteWord`, but `$` stays as it is (systemd
 * expands specifiers there, not variables).
 */
export const quoteAssignment = (name: string, value: string) =>
  `"${`${name}=${value}`.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("%", "%%")}"`

/** Splits an ExecStart line written by `quoteWord` back into words. */
export const parseExecStart = (line: string): ReadonlyArray<string> => {
  const words: Array<string> = []
  const pattern = /"((?:[^"\\]|\\.)*)"|(\S+)/g
  for (const match of line.matchAll(pattern)) {
    const raw = match[1] ?? match[2] ?? ""
    words.push(match[1] === undefined ? raw : raw.replace(/\\(.)/g, "$1").replaceAll("%%", "%").replaceAll("$$", "$"))
  }
  return words
}

/** The unit file this version writes, byte for byte (verify compares against it). */
export const renderUnit = (spec: ServiceSpec): string =>
  [
    "[Unit]",
    `Description=blctx daemon (installation ${spec.installationId})`,
    "",
    "[Service]",
    "Type=notify",
    // Readiness is sent by the systemd-notify helper, a child of the daemon.
    "NotifyAccess=all",
    ...Object.entries(spec.environment).map(([name, value]) => `Environment=${quoteAssignment(name, value)}`),
    `ExecStart=${spec.command.map(quoteWord).join(" ")}`,
    "Restart=on-failure",
    "RestartSec=1",
    `TimeoutStartSec=${Duration.toSeconds(SUPERVISOR_START_WAIT)}`,
    `TimeoutStopSec=${Duration.toSeconds(SHUTDOWN_LIMIT)}`,
    "UMask=0177",
    "",
    "[Install]",
    "WantedBy=default.target",
    ""
  ].join("\n")

/** The few unit settings the fake manager honours, read back from a unit file. */
export interface ParsedUnit {
  readonly execStart: ReadonlyArray<string>
  readonly environment: Readonly<Record<string, string>>
  readonly restartOnFailure: boolean
  readonly timeoutStartSec: number
  readonly timeoutStopSec: number
  readonly notify: boolean
}

export const parseUnit = (text: string): ParsedUnit | undefined => {
  const values = new Map<string, string>()
  const environment: Record<string, string> = {}
  for (const line of text.split("\n")) {
    const eq = line.indexOf("=")
    if (eq <= 0 || line.startsWith("#") || line.startsWith("[")) continue
    const key = line.slice(0, eq)
    const value = line.slice(eq + 1)
    values.set(key, value)
    if (key !== "Environment") continue
    // Each quoted word is one assignment; unescaping matches parseExecStart but leaves `$` alone.
    for (const match of value.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)) {
      const raw = match[1] === undefined ? (match[2] ?? "") : match[1].replace(/\\(.)/g, "$1").replaceAll("%%", "%")
      const at = raw.indexOf("=")
      if (at > 0) environment[raw.slice(0, at)] = raw.slice(at + 1)
    }
  }
  const exec = values.get("ExecStart")
  if (exec === undefined) return undefined
  return {
    execStart: parseExecStart(exec),
    environment,
    restartOnFailure: values.get("Restart") === "on-failure",
    timeoutStartSec: Number(values.get("TimeoutStartSec") ?? "90"),
    timeoutStopSec: Number(values.get("TimeoutStopSec") ?? "90"),
    notify: values.get("Type") === "notify"
  }
}
