import { type ForgetSelector, selectorKind } from "./forget-contract.js"
import type { ForgetPlan } from "./forget-plan.js"

/** What a preview's counts mean that a person might not expect, in a few sentences. */
export const previewNotes = (selector: ForgetSelector, plan: ForgetPlan): ReadonlyArray<string> => {
  const notes: Array<string> = []
  const kind = selectorKind(selector)
  if (plan.noteIds.length > 0) {
    notes.push(
      kind === "note"
        ? "A note is forgotten whole: every revision of it."
        : "Notes are forgotten whole: every revision of a note any matched revision belongs to is counted and removed."
    )
  }
  if (plan.spans.length > 0) {
    notes.push(
      "The transcript files stay known (path, size, hash) and the forgotten byte ranges are recorded, so importing them again does not bring the text back; text appended later is indexed."
    )
  }
  if (kind === "time_range") {
    notes.push(
      "A message whose time is unknown is never in a time range; capture events received in the range are removed."
    )
  }
  notes.push(
    "A tombstone records the selector, the time and these counts, never the text. Nothing is removed until you confirm with this token (valid 10 minutes, and only until the daemon restarts)."
  )
  return notes
}
