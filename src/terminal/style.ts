/**
 * ANSI styling, or none at all: the same layout either way. Effect-free, so the search fast path
 * (src/cli/fast-search.ts) colors its readable output exactly as the full CLI does.
 */
export interface Style {
  readonly green: (s: string) => string
  readonly red: (s: string) => string
  readonly yellow: (s: string) => string
  readonly dim: (s: string) => string
  readonly bold: (s: string) => string
}

const wrap = (open: number, close: number) => (s: string) => `\u001b[${open}m${s}\u001b[${close}m`
export const ansiStyle: Style = {
  green: wrap(32, 39),
  red: wrap(31, 39),
  yellow: wrap(33, 39),
  dim: wrap(2, 22),
  bold: wrap(1, 22)
}
const same = (s: string) => s
export const plainStyle: Style = { green: same, red: same, yellow: same, dim: same, bold: same }
