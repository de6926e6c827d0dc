import * as NodePath from "node:path"
import { AGENT_LABELS } from "../../domain/agent-names.js"
import { makeClaudeClassifier } from "../claude-classify.js"
import { decidedByType, isSidechain, stringField } from "../claude-records.js"
import { codexFormat } from "./codex-format.js"
import { NO_HEADER, namedOrStarting } from "./format-probe.js"
import { geminiFormat } from "./gemini-format.js"
import type { TranscriptFormat } from "./transcript-format.js"
import { walkSessionFolders } from "./walk-folders.js"

export const CLAUDE_PROJECTS_DIR = "projects"

/**
 * Claude Code names a session file `<session id>.jsonl` (a UUID), and a sub-agent's file
 * `<session id>/subagents/agent-<agent id>.jsonl`.
 */
const FILE_NAME = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|agent-[A-Za-z0-9_-]{1,64})\.jsonl$/i
/** Line types a Claude Code transcript may start with (`type` is then its first field). */
const FIRST_TYPES = [
  "user",
  "assistant",
  "system",
  "summary",
  "attachment",
  "queue-operation",
  "file-history-snapshot",
  "progress",
  "custom-title",
  "ai-title",
  "last-prompt",
  "api-request",
  "api-request-blob",
  "api-request-shape",
  "cost-state",
  "atis-latch"
]
/** Fields only Claude Code's records start with (a conversation line starts `{"parentUuid":…`). */
const FIRST_FIELDS = ["parentUuid", "logicalParentUuid", "leafUuid", "isSidechain", "sessionId", "uuid"]
/**
 * The start of a Claude Code record, matched on the first bytes alone (the first line can be
 * long): its first field is one only Claude Code writes first, or `type` with a Claude Code type.
 */
const FIRST_RECORD = new RegExp(
  String.raw`^\s*\{\s*(?:"(?:${FIRST_FIELDS.join("|")})"\s*:|"type"\s*:\s*"(?:${FIRST_TYPES.join("|")})")`
)

/**
 * Claude Code transcripts: `$CLAUDE_CONFIG_DIR/projects/<cwd with / as ->/<session id>.jsonl`
 * (default `~/.claude`), and sub-agents' files under `<session id>/subagents/`. A file Codex or
 * Gemini CLI claims (its name or first record) is never claimed here, and Codex's own detection claims no
 * Claude Code record (`registry.test.ts`, `claude-format.test.ts`).
 */
export const claudeFormat: TranscriptFormat = {
  id: "claude",
  label: AGENT_LABELS.claude,
  agent: "claude",
  sourceType: "claude_transcript",
  expects: `Claude Code session files are named <session id>.jsonl (a UUID) or agent-*.jsonl, or start with a Claude Code record ({"parentUuid":…} or {"type":"user",…})`,
  home: (paths) => paths.claudeHome,
  homeHint: "$CLAUDE_CONFIG_DIR, or ~/.claude",
  sessionFolders: (home) => [{ path: NodePath.join(home, CLAUDE_PROJECTS_DIR), archived: false }],
  detect: (probe) => {
    if (codexFormat.detect(probe) || geminiFormat.detect(probe)) return false
    return namedOrStarting(probe, FILE_NAME, FIRST_RECORD)
  },
  discover: (home) => walkSessionFolders(claudeFormat.sessionFolders(home), { suffix: ".jsonl" }),
  classifier: makeClaudeClassifier,
  summarizer: () => makeClaudeClassifier({ decisions: false }),
  decidedByType,
  header: (first) => {
    if (first.kind !== "record") return NO_HEADER
    const sessionId = stringField(first.entry, "sessionId")
    const agentId = stringField(first.entry, "agentId")
    return {
      // A sub-agent's records name its parent's session: its own id adds the agent's (as the classifier does).
      session_id:
        sessionId !== null && agentId !== null && isSidechain(first.entry)
          ? `${sessionId}/agent-${agentId}`
          : sessionId,
      cwd: stringField(first.entry, "cwd")
    }
  }
}
