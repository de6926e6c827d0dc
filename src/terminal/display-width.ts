/** A CSI escape sequence (colors and cursor movement), which takes no room on screen. */
const CSI = new RegExp(`${String.fromCharCode(0x1b)}\\[[0-?]*[ -/]*[@-~]`, "y")

/**
 * How many columns a character may take, erring wide: printable ASCII takes one, and anything
 * else is counted as two, because East Asian wide, fullwidth and emoji characters take two and
 * "ambiguous" ones (○, –, …, many symbols) take two in some terminals and locales.
 */
const cellWidth = (codePoint: number): number => (codePoint >= 0x20 && codePoint < 0x7f ? 1 : 2)

/** Splits styled text into escape sequences (no width) and characters (with their width). */
export const cells = function* (text: string): Generator<{ readonly text: string; readonly width: number }> {
  let i = 0
  while (i < text.length) {
    if (text.charCodeAt(i) === 0x1b) {
      CSI.lastIndex = i
      const m = CSI.exec(text)
      if (m !== null) {
        yield { text: m[0], width: 0 }
        i += m[0].length
        continue
      }
    }
    const codePoint = text.codePointAt(i) ?? 0
    const ch = String.fromCodePoint(codePoint)
    yield { text: ch, width: cellWidth(codePoint) }
    i += ch.length
  }
}

/** The columns styled text takes at most on one line of a terminal (escape sequences take none). */
export const displayWidth = (text: string): number => {
  let width = 0
  for (const cell of cells(text)) width += cell.width
  return width
}
