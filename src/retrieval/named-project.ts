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
 * The one working directory whose name holds every word of `words` ("dashboard" names
 * `…/web-dashboard`), or undefined when none does, or several (two clones of one project, or
 * "api" in two names): then the question is searched as words.
 */
export const projectNamedBy = (words: ReadonlyArray<string>, cwds: ReadonlyArray<string>): string | undefined => {
  if (words.length === 0) return undefined
  const named = cwds.filter((cwd) => {
    const name = projectNameWords(cwd)
    return words.every((w) => name.has(w))
  })
  return named.length === 1 ? named[0] : undefined
}
