/**
 * "What did we do on the billing service last week?": a question bounded in time whose words are
 * nothing but a project's name asks for that project's turns of that time, which need not say the
 * name ("Invoice PDFs are rendered from…"). The project is the last segment of a session's
 * working directory, read as words (`billing-service`: billing, service). Pure; the reads are in
 * `lexical-search.ts`.
 */

/** The words of a project's name: its directory's last segment, split at anything not a letter or digit. */
export const projectNameWords = (cwd: string): ReadonlySet<string> => {
  const segment = cwd.replace(/\/+$/, "").split("/").pop() ?? ""
  return new Set((segment.match(/[\p{L}\p{N}]+/gu) ?? []).map((w) => w.toLowerCase()))
}

/**
 * Words that ask what went on rather than where ("what did we work on…", "what changed in…",
 * "what's new in the billing project…"): passed over when they are not the name's own words.
 */
const ACTIVITY_WORDS: ReadonlySet<string> = new Set(
  (
    "work works worked working change changes changed changing new progress going went " +
    "project projects repo repos repository codebase"
  ).split(" ")
)

/**
 * The one working directory whose name holds every word of `words` ("dashboard" names
 * `…/web-dashboard`) but the activity words, and at least one, or undefined when none does, or
 * several (two clones of one project, or "api" in two names): then the question is searched as
 * words.
 */
export const projectNamedBy = (words: ReadonlyArray<string>, cwds: ReadonlyArray<string>): string | undefined => {
  const named = cwds.filter((cwd) => {
    const name = projectNameWords(cwd)
    const asked = words.filter((w) => name.has(w) || !ACTIVITY_WORDS.has(w))
    return asked.length > 0 && asked.every((w) => name.has(w))
  })
  return named.length === 1 ? named[0] : undefined
}
