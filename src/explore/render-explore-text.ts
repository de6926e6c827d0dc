import { Option } from "effect"
import { sanitizeForTerminal } from "../installer/render-text.js"
import { formatById } from "../transcripts/formats/registry.js"
import type { SourcePosition } from "../transcripts/record.js"
import type { ExploreFileResult, ExploreMessage, ExploreTurn } from "./explore-file.js"
import type { ExploreListResult } from "./list-transcripts.js"

/** Every string from a transcript or the file system passes through here before the terminal. */
const safe = sanitizeForTerminal

const at = (p: SourcePosition) => `line ${p.line} bytes ${p.byte_start}-${p.byte_end}`
const indent = (text: string, prefix = "    ") =>
  safe(text)
    .split("\n")
    .map((l) => `${prefix}${l}`)
    .join("\n")
const oneLine = (text: string, max = 100) => {
  const flat = safe(text).replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`
const counts = (record: Readonly<Record<string, number>>) =>
  Object.entries(record)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([k, n]) => `${safe(k)} ${n}`)
    .join(", ")

/** The format's name for people (`Codex`, `Claude Code`), or its id when this build does not know it. */
const labelOf = (format: string) => Option.match(formatById(format), { onNone: () => format, onSome: (f) => f.label })

export const renderList = (r: ExploreListResult): string => {
  const lines = r.homes.map(
    (h) => `${safe(h.label)} transcripts in ${safe(h.home)}: ${h.total} (${h.active} active, ${h.archived} archived)`
  )
  if (r.compressed.count > 0) {
    lines.push(`${r.compressed.count} compressed (.jsonl.zst) not read yet, e.g. ${safe(r.compressed.paths[0] ?? "")}`)
  }
  if (r.skipped_links > 0) lines.push(`${r.skipped_links} symbolic links skipped (never followed)`)
  if (r.transcripts.length === 0) lines.push("No transcripts found.")
  for (const t of r.transcripts) {
    lines.push("")
    lines.push(safe(t.path))
    const where = t.cwd === null ? "" : `  cwd ${safe(t.cwd)}`
    const id = t.session_id === null ? "" : `  session ${safe(t.session_id)}`
    lines.push(
      `  ${t.modified_at}  ${safe(labelOf(t.format))}  ${t.size} bytes${t.archived ? "  archived" : ""}${id}${where}`
    )
  }
  if (r.total > r.transcripts.length) {
    lines.push("", `Showing the newest ${r.transcripts.length} of ${r.total}; use --limit N for more.`)
  }
  lines.push("", "Inspect one with: blctx explore PATH [--view messages|raw|preview]")
  return lines.join("\n")
}

const header = (r: ExploreFileResult): Array<string> => {
  const t = r.totals
  const lines = [
    `${safe(r.path)}`,
    `  ${r.captured_size} bytes captured, modified ${r.modified_at}; ${plural(t.records, "record")}, ${plural(t.turns, "turn")}, ${plural(t.parse_errors, "unreadable line")}`
  ]
  if (r.session !== null) {
    const s = r.session
    const parts = [
      s.id === null ? null : `session ${safe(s.id)}`,
      s.cli_version === null ? null : `${safe(labelOf(r.format))} ${safe(s.cli_version)}`,
      s.cwd === null ? null : `cwd ${safe(s.cwd)}`,
      s.forked_from_id === null ? null : `forked from ${safe(s.forked_from_id)}`,
      s.parent_history_from_line === null ? null : `parent history copied from line ${s.parent_history_from_line}`,
      s.subagent === null ? null : `${safe(s.subagent)} sub-agent`,
      s.parent_session_id == null ? null : `spawned by session ${safe(s.parent_session_id)}`
    ].filter((p) => p !== null)
    lines.push(`  ${parts.join(", ")}`)
  }
  lines.push(`  decisions (whole file): ${counts(t.by_decision)}`)
  if (Object.keys(t.unknown_types).length > 0) lines.push(`  unknown line types kept: ${counts(t.unknown_types)}`)
  if (Object.keys(t.unknown_fields).length > 0) lines.push(`  unknown fields kept: ${counts(t.unknown_fields)}`)
  return lines
}

/** Who wrote a message: you, the agent (`codex`, `claude`), or the role as written. */
const who = (m: ExploreMessage, agent: string) =>
  m.role === "user" ? "you" : m.role === "assistant" ? safe(agent) : safe(m.role)

const flagText = (t: ExploreTurn) =>
  t.flags.length === 0 ? "" : `  ⚠ ${t.flags.map((f) => (f === "no_request" ? "no request" : "no answer")).join(", ")}`

const turnTitle = (t: ExploreTurn) => {
  const id = t.turn_id === null ? "" : ` ${safe(t.turn_id)}`
  const name = t.number === 0 ? "Before the first turn" : `Turn ${t.number}${id}`
  return `${name} (lines ${t.first_line}-${t.last_line}, ${plural(t.records, "record")})${flagText(t)}`
}

const footer = (r: ExploreFileResult, view: string): Array<string> => {
  const p = r.page
  // The records before the first turn are shown but are not a turn: say so rather than count them.
  const preTurn = (r.turns ?? []).some((t) => t.number === 0) ? " plus the records before the first turn" : ""
  const shown = plural(p.shown, p.unit.slice(0, -1))
  if (p.next_line === null) return ["", `End of file (${shown}${preTurn} shown from line ${p.start_line}).`]
  return [
    "",
    `${shown}${preTurn} shown. Next: blctx explore ${safe(r.path)}${view} --start-line ${p.next_line} --limit ${p.limit}`
  ]
}

export const renderFile = (r: ExploreFileResult, details: boolean): string => {
  const lines = header(r)
  switch (r.view) {
    case "conversation": {
      for (const t of r.turns ?? []) {
        lines.push("", turnTitle(t))
        for (const m of t.messages) {
          const label = m.kind === "request" ? "" : ` (${m.kind.replace("_", " ")})`
          lines.push(`  ${who(m, r.agent)}${label} [${at(m.source)}]`, indent(m.text))
        }
      }
      lines.push(...footer(r, ""))
      break
    }
    case "preview": {
      for (const t of r.turns ?? []) {
        lines.push("", turnTitle(t))
        for (const m of t.messages) {
          const dups =
            m.duplicates.length === 0 ? "" : `; duplicates: ${m.duplicates.map((d) => `line ${d.line}`).join(", ")}`
          lines.push(`  index  ${m.kind.padEnd(12)} ${at(m.source)}  ${safe(m.reason)}${dups}`)
          lines.push(`         ${oneLine(m.text)}`)
        }
        if (details) {
          for (const d of t.decisions ?? []) {
            const dup = d.duplicate_of === undefined ? "" : ` -> line ${d.duplicate_of.line}`
            lines.push(
              `    ${String(d.line).padStart(6)}  ${d.decision.padEnd(12)} ${safe(d.record_type).padEnd(32)} ${safe(d.reason)}${dup}`
            )
          }
        }
      }
      lines.push("", "Not indexed (whole file):")
      for (const [reason, n] of Object.entries(r.exclusions ?? {}).sort((a, b) => b[1] - a[1])) {
        lines.push(`  ${String(n).padStart(6)}  ${safe(reason)}`)
      }
      if (!details) lines.push("  (per-record decisions: --details)")
      lines.push(...footer(r, " --view preview"))
      break
    }
    case "messages": {
      lines.push("", `${safe(r.note ?? "")}`)
      for (const m of r.candidates ?? []) {
        const dup = m.duplicate_of === undefined ? "" : ` of line ${m.duplicate_of.line}`
        lines.push(
          "",
          `[${at(m)}] ${safe(m.record_type)} role=${safe(m.role)}${m.phase === null ? "" : ` phase=${safe(m.phase)}`} turn ${m.turn}`,
          `  candidate -> ${m.decision}${dup} (${safe(m.reason)})`,
          indent(m.text)
        )
      }
      lines.push(...footer(r, " --view messages"))
      break
    }
    case "raw": {
      lines.push("")
      for (const rec of r.records ?? []) {
        lines.push(
          `${String(rec.line).padStart(6)}  ${`${rec.byte_start}-${rec.byte_end}`.padEnd(17)} ${safe(rec.record_type).padEnd(34)} ${rec.timestamp === null ? "-".padEnd(24) : safe(rec.timestamp).padEnd(24)} ${rec.decision} (${safe(rec.reason)})`
        )
        if (rec.error !== undefined) lines.push(`        ${safe(rec.error.reason)}: ${safe(rec.error.message)}`)
        if (details && rec.value !== undefined) lines.push(`        ${oneLine(JSON.stringify(rec.value), 160)}`)
      }
      lines.push(...footer(r, " --view raw"))
      break
    }
  }
  return lines.join("\n")
}
