/** What a person reads when an agent's command was looked for on PATH and not found. */
export const notOnPath = (command: string, searched: ReadonlyArray<string>): string =>
  searched.length === 0
    ? `the ${command} command was not found: PATH is empty`
    : `the ${command} command was not found on PATH (${searched.join(":")})`
