/**
 * Which prompts are worth a recall: a search for "yes", "/compact" or "ls" finds noise and costs
 * the daemon a query at every keystroke-sized turn. Must not import `effect`.
 */
export const MIN_RECALL_CHARS = 12
export const MIN_RECALL_WORDS = 3
/** The daemon's query bound (MAX_QUERY_CHARS in src/retrieval/contract.ts): a longer prompt is cut. */
export const MAX_RECALL_QUERY_CHARS = 4_000

/** The query to recall for, or undefined when the prompt is too short or a command. */
export const recallQueryOf = (prompt: string | undefined): string | undefined => {
  const text = (prompt ?? "").trim()
  if (text.length < MIN_RECALL_CHARS) return undefined
  // Slash commands (/compact, /model) and shell escapes (!ls) are for the agent, not questions.
  if (text.startsWith("/") || text.startsWith("!")) return undefined
  const words = text.split(/\s+/)
  if (words.length < MIN_RECALL_WORDS) return undefined
  const cut = text.slice(0, MAX_RECALL_QUERY_CHARS)
  // Never end on half of a surrogate pair: the daemon would get an unpaired code unit.
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut
}
