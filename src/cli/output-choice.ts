/**
 * How an answer is printed, decided from the flags, the terminal and the environment, without
 * `effect`: the full CLI (`output-mode.ts`, `emit`) and the search fast path (`fast-search.ts`)
 * both ask here, so a command line prints the same bytes whichever path answers it.
 */

/** What the terminal and the environment say; `columns` is stdout's width when it is a TTY. */
export interface TerminalFacts {
  readonly stdoutTty: boolean
  readonly columns: number | undefined
  readonly env: { readonly NO_COLOR?: string | undefined; readonly COLUMNS?: string | undefined }
}

/** JSON unless `--pretty` or a terminal asks for readable text; `--json` wins over both. */
export const wantsReadable = (json: boolean, pretty: boolean, stdoutTty: boolean): boolean =>
  !json && (pretty || stdoutTty)

/**
 * Colors: only on a TTY, without `--json` or `--no-color`, and without `NO_COLOR` set to anything
 * but the empty string (https://no-color.org).
 */
export const wantsColor = (flags: { readonly json: boolean; readonly noColor: boolean }, facts: TerminalFacts) =>
  !flags.json && !flags.noColor && facts.stdoutTty && (facts.env.NO_COLOR ?? "") === ""

/** A width a person can read text in: a positive whole number of columns, at most this. */
const MAX_COLUMNS = 10_000

const columnsIn = (value: string | number | undefined): number | undefined => {
  const n = typeof value === "string" ? (/^[1-9][0-9]{0,4}$/.test(value) ? Number(value) : Number.NaN) : value
  return n !== undefined && Number.isInteger(n) && n > 0 && n <= MAX_COLUMNS ? n : undefined
}

/**
 * The columns readable text is wrapped to: `COLUMNS` when it is set (as `ls` and most tools read
 * it, so a pipe or a script can ask for a width), else the terminal's own width, else none (text
 * for a pipe is not wrapped).
 */
export const outputWidth = (facts: TerminalFacts): number | undefined =>
  columnsIn(facts.env.COLUMNS) ?? (facts.stdoutTty ? columnsIn(facts.columns) : undefined)
