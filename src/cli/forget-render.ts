import type { ForgetPreviewResponse, ForgetResponse } from "../forget/forget-contract.js"
import { plural, sourceCountParts } from "../forget/forget-counts-text.js"
import type { plainStyle } from "../installer/render-text.js"
import { sanitizeForTerminal } from "../terminal/sanitize.js"
import { describeSource } from "./search-render.js"

type Style = typeof plainStyle

/** A preview for people: counts by source, the first items with their citations, what the counts mean. */
export const renderForgetPreview = (preview: ForgetPreviewResponse, style: Style): string => {
  const lines: Array<string> = []
  const c = preview.counts
  lines.push(style.bold(`Would forget ${plural(c.messages, "message")}:`))
  for (const [source, n] of Object.entries(c.by_source)) {
    const parts = sourceCountParts(n)
    lines.push(`  ${sanitizeForTerminal(source)}: ${parts.join(", ")}`)
  }
  if (c.capture_bindings + c.capture_events > 0) {
    lines.push(`  capture: ${plural(c.capture_bindings, "binding")}, ${plural(c.capture_events, "event")}`)
  }
  if (preview.items.length > 0) {
    lines.push("", style.bold(preview.items.length < c.messages ? `First ${preview.items.length}:` : "Items:"))
    for (const item of preview.items) {
      lines.push(
        `  ${style.dim(sanitizeForTerminal(describeSource(item.source)))}  ${item.timestamp ?? "time unknown"}`
      )
      lines.push(`    ${sanitizeForTerminal(item.excerpt.replace(/\s+/g, " "))}`)
    }
  }
  lines.push("", ...preview.notes.map((n) => style.dim(n)))
  return lines.join("\n")
}

/** What was forgotten, in one line or two. */
export const renderForgotten = (forgotten: ForgetResponse, _style: Style): string =>
  [
    `Forgot ${plural(forgotten.counts.messages, "message")} (tombstone ${forgotten.tombstone_id}, ${forgotten.forgotten_at}).`,
    forgotten.scrubbed
      ? "The database and its WAL were rewritten: nothing of the forgotten text remains in them."
      : "The database will be rewritten shortly (the daemon retries the scrub)."
  ].join("\n")
