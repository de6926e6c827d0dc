/** A path as a shell word, quoted only when it needs to be, so a remediation can be pasted as is. */
export const shellWord = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`)
