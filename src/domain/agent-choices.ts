import { AGENT_LABELS, AGENT_NAMES } from "./agent-names.js"

// Help and schema texts that list the agents. Plain code over the names tuple: request schemas
// that use them are also bundled into the viewer's page, which cannot load the transcript formats.

/** Words as a person lists alternatives: `a, b or c`. */
export const orList = (words: ReadonlyArray<string>): string =>
  words.length <= 1 ? (words[0] ?? "") : `${words.slice(0, -1).join(", ")} or ${words.at(-1)}`

/**
 * The agents as a choice, by the code word a person types: `codex, claude or gemini`; with
 * `glossed`, each word its name for people does not already say gets it: `codex, claude (Claude
 * Code) or gemini (Gemini CLI)`.
 */
export const agentChoices = (options: { readonly glossed?: boolean } = {}): string =>
  orList(
    AGENT_NAMES.map((agent) => {
      const label = AGENT_LABELS[agent]
      return options.glossed === true && label.toLowerCase() !== agent ? `${agent} (${label})` : agent
    })
  )

/** Each agent's source type, for people: `codex_transcript, claude_transcript or gemini_transcript`. */
export const transcriptSourceTypes = (): string => orList(AGENT_NAMES.map((agent) => `${agent}_transcript`))

/** The agents by their names for people, as alternatives: `Codex, Claude Code or Gemini CLI`. */
export const agentLabelChoices = (): string => orList(AGENT_NAMES.map((agent) => AGENT_LABELS[agent]))
