import * as NodePath from "node:path"
import { Option } from "effect"
import { AGENT_LABELS } from "../../domain/agent-names.js"
import { makeClassifier } from "../classify.js"
import { decodeSessionMeta } from "../codex-payloads.js"
import { decidedByType } from "../codex-records.js"
import { NO_HEADER, namedOrStarting } from "./format-probe.js"
import type { TranscriptFormat } from "./transcript-format.js"
import { walkSessionFolders } from "./walk-folders.js"

export const CODEX_SESSIONS_DIR = "sessions"
export const CODEX_ARCHIVED_DIR = "archived_sessions"

/** Codex names its session files `rollout-<time>-<id>.jsonl`. */
const FILE_NAME = /^rollout-.+\.jsonl$/
/** Line types a Codex rollout starts with (the first is `session_meta`; a fragment may start later). */
const RECORD_TYPES = ["session_meta", "response_item", "event_msg", "turn_context", "compacted"]
/** A top-level field with a short scalar value (`"timestamp":"…"`, `"ordinal":7`) before `type`. */
const SCALAR_FIELD = String.raw`"[A-Za-z_]{1,32}"\s*:\s*(?:"[^"\\]{0,100}"|-?\d{1,20}(?:\.\d{1,20})?|true|false|null)\s*,\s*`
/**
 * The start of a Codex record, `{"timestamp":"…","type":"session_meta",…`, matched on the first
 * bytes alone: the first line can be megabytes long (base instructions), so it is never parsed here.
 */
const FIRST_RECORD = new RegExp(
  String.raw`^\s*\{\s*(?:${SCALAR_FIELD}){0,4}"type"\s*:\s*"(?:${RECORD_TYPES.join("|")})"`
)

/** Codex CLI rollouts: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl` and `archived_sessions/`. */
export const codexFormat: TranscriptFormat = {
  id: "codex",
  label: AGENT_LABELS.codex,
  agent: "codex",
  sourceType: "codex_transcript",
  expects: `Codex session files are named rollout-*.jsonl, or start with a Codex record ({"timestamp":…,"type":"${RECORD_TYPES[0]}",…})`,
  home: (paths) => paths.codexHome,
  homeHint: "$CODEX_HOME, or ~/.codex",
  sessionFolders: (home) => [
    { path: NodePath.join(home, CODEX_SESSIONS_DIR), archived: false },
    { path: NodePath.join(home, CODEX_ARCHIVED_DIR), archived: true }
  ],
  detect: (probe) => namedOrStarting(probe, FILE_NAME, FIRST_RECORD),
  discover: (home) =>
    walkSessionFolders(codexFormat.sessionFolders(home), { suffix: ".jsonl", compressedSuffix: ".jsonl.zst" }),
  classifier: makeClassifier,
  summarizer: () => makeClassifier({ decisions: false }),
  decidedByType,
  header: (first) => {
    if (first.kind !== "record" || first.entry.type !== "session_meta") return NO_HEADER
    return Option.match(decodeSessionMeta(first.entry.payload), {
      onNone: () => NO_HEADER,
      onSome: (meta) => ({ session_id: meta.id ?? null, cwd: meta.cwd ?? null })
    })
  }
}
