import * as NodePath from "node:path"
import { Effect } from "effect"
import { AGENT_LABELS } from "../../domain/agent-names.js"
import { makeGeminiClassifier } from "../gemini-classify.js"
import { cwdOf, HEADER_TYPE, stringField, untypedType } from "../gemini-records.js"
import { NO_HEADER, namedOrStarting } from "./format-probe.js"
import type { FoundSession, TranscriptFormat } from "./transcript-format.js"
import { walkSessionFolders } from "./walk-folders.js"

/** Under the CLI's home, every project's scratch folder: `tmp/<project>/chats/` holds its sessions. */
export const GEMINI_TMP_DIR = "tmp"
const CHATS_DIR = "chats"

/**
 * Gemini CLI names a session file `session-<YYYY-MM-DDTHH-MM>-<first 8 of the session id>.jsonl`,
 * and a sub-agent's `chats/<parent session id>/<session id>.jsonl`.
 */
const FILE_NAME = /^session-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-[A-Za-z0-9_-]{1,64}\.jsonl$/
/**
 * The start of a Gemini CLI session file: its header, `{"sessionId":"…","projectHash":"…",…`,
 * matched on the first bytes. (Versions before 0.61 kept one pretty-printed JSON document,
 * `session-*.json`: not claimed, not read.)
 */
const FIRST_RECORD = /^\s*\{\s*"sessionId"\s*:\s*"[^"\\]{0,200}"\s*,\s*"projectHash"\s*:/
const MATCHED_CHARS = 1024

/** Whether a found file is a session: it sits in a project's `chats/` folder (a sub-agent's one level down). */
const isSessionFile = (tmp: string) => (file: FoundSession) => {
  const parts = NodePath.relative(tmp, file.path).split(NodePath.sep)
  return (parts.length === 3 || parts.length === 4) && parts[1] === CHATS_DIR
}

/**
 * Gemini CLI sessions: `$GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/session-*.jsonl` (default
 * `~/.gemini`), one JSON object a line, appended as the session goes (`gemini-records.ts`).
 * Detected by name or by its header; the header's `sessionId` also starts some Claude Code
 * records, so Claude Code's detection leaves Gemini CLI's files alone (`claude-format.ts`).
 */
export const geminiFormat: TranscriptFormat = {
  id: "gemini",
  label: AGENT_LABELS.gemini,
  agent: "gemini",
  sourceType: "gemini_transcript",
  expects: `Gemini CLI session files are named session-<time>-<id>.jsonl, or start with a session header ({"sessionId":…,"projectHash":…})`,
  home: (paths) => paths.geminiHome,
  homeHint: "$GEMINI_CLI_HOME/.gemini, or ~/.gemini",
  sessionFolders: (home) => [{ path: NodePath.join(home, GEMINI_TMP_DIR), archived: false }],
  detect: (probe) => namedOrStarting(probe, FILE_NAME, FIRST_RECORD, MATCHED_CHARS),
  discover: (home) => {
    const tmp = NodePath.join(home, GEMINI_TMP_DIR)
    return walkSessionFolders(geminiFormat.sessionFolders(home), { suffix: ".jsonl" }).pipe(
      Effect.map((found) => ({ ...found, files: found.files.filter(isSessionFile(tmp)) }))
    )
  },
  classifier: makeGeminiClassifier,
  summarizer: () => makeGeminiClassifier({ decisions: false }),
  untypedType,
  header: (first) => {
    if (first.kind !== "record") return NO_HEADER
    return {
      session_id: first.entry.type === HEADER_TYPE ? stringField(first.entry, "sessionId") : null,
      cwd: cwdOf(first.entry)
    }
  }
}
