import type { CodexHook, CodexHooksListing } from "./codex-app-server.js"
import type { HookEntry } from "./hooks-file.js"

/**
 * How Codex itself sees blctx's hook entries (`hooks/list`): whether each is loaded under its
 * event, enabled, and trusted. Codex names events in its own spelling ("sessionStart" in the
 * listing, "session_start" in keys), so events are compared without case and underscores.
 */
const eventKey = (event: string) => event.replaceAll("_", "").toLowerCase()

export interface ListedEntry {
  readonly entry: HookEntry
  readonly hook: CodexHook
}

export interface HooksListingJudgement {
  /** Entries Codex does not list under their event with their exact command. */
  readonly missing: ReadonlyArray<HookEntry>
  readonly disabled: ReadonlyArray<ListedEntry>
  readonly trusted: ReadonlyArray<ListedEntry>
  /** Loaded and enabled, but not trusted: "untrusted" (never approved), "modified" (changed since), or a later status. */
  readonly pending: ReadonlyArray<ListedEntry>
}

/**
 * Finds each entry in the listing by event and exact command (never by key: a key is the entry's
 * position in its file and shifts when groups move). When Codex lists the command more than once
 * (the same file reached as user and project layer), the one from `hooksFile` counts.
 */
export const judgeHooksListing = (
  listing: CodexHooksListing,
  entries: ReadonlyArray<HookEntry>,
  hooksFile: string
): HooksListingJudgement => {
  const missing: Array<HookEntry> = []
  const disabled: Array<ListedEntry> = []
  const trusted: Array<ListedEntry> = []
  const pending: Array<ListedEntry> = []
  for (const entry of entries) {
    const candidates = listing.hooks.filter(
      (h) => h.command === entry.command && eventKey(h.eventName) === eventKey(entry.event)
    )
    const hook = candidates.find((h) => h.sourcePath === hooksFile) ?? candidates[0]
    if (hook === undefined) missing.push(entry)
    else if (!hook.enabled) disabled.push({ entry, hook })
    else if (hook.trustStatus === "trusted") trusted.push({ entry, hook })
    else pending.push({ entry, hook })
  }
  return { missing, disabled, trusted, pending }
}

/** What Codex said beside the listing that concerns this file (or everything, when nothing names it). */
export const listingProblems = (listing: CodexHooksListing, hooksFile: string): ReadonlyArray<string> => {
  const errors = listing.errors.map((e) => `${e.path}: ${e.message}`)
  const all = [...errors, ...listing.warnings]
  const aboutFile = all.filter((text) => text.includes(hooksFile))
  return aboutFile.length > 0 ? aboutFile : all
}

const events = (listed: ReadonlyArray<ListedEntry>) => listed.map((l) => l.entry.event).join(", ")

/** Trust in one phrase: all trusted, or what is still to approve and how. */
export const describeTrust = (j: HooksListingJudgement): string => {
  const total = j.trusted.length + j.pending.length
  if (j.pending.length === 0) return `trusted in Codex (${total} of ${total})`
  const changed = j.pending.filter((l) => l.hook.trustStatus !== "untrusted")
  const since =
    changed.length === 0
      ? ""
      : `; ${events(changed)} ${changed.length === 1 ? "is" : "are"} ${[...new Set(changed.map((l) => l.hook.trustStatus))].join("/")} since last approved`
  return `approve on next Codex launch: open /hooks and trust the blctx hooks (${j.trusted.length} of ${total} trusted; waiting: ${events(j.pending)}${since})`
}

export const pendingEvents = (j: HooksListingJudgement) => j.pending.map((l) => l.entry.event)
export const disabledEvents = (j: HooksListingJudgement) => events(j.disabled)
