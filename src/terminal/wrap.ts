import { displayWidth } from "./display-width.js"

/** A run of text and how it is styled; its spaces are where a line may break. */
export interface Segment {
  readonly text: string
  readonly style?: (s: string) => string
}

interface Token {
  /** The spaces before the word, dropped where the line breaks. */
  readonly gap: string
  readonly word: string
  /** The segment the word belongs to: a segment's words on one line are styled as one run. */
  readonly segment: number
}

const tokensOf = (segments: ReadonlyArray<Segment>): ReadonlyArray<Token> => {
  const tokens: Array<Token> = []
  segments.forEach((segment, index) => {
    let gap = ""
    for (const part of segment.text.split(/( +)/)) {
      if (part === "") continue
      if (part.startsWith(" ")) gap += part
      else {
        tokens.push({ gap, word: part, segment: index })
        gap = ""
      }
    }
  })
  return tokens
}

/** A run of one segment's words on one line, and the spaces before it (left unstyled). */
interface Piece {
  readonly gap: string
  readonly segment: number
  text: string
}

/**
 * One paragraph as terminal lines of at most `width` columns, broken only between words (at
 * spaces): the first line starts with `indent`, the others with `hang` (a hanging indent). A word
 * wider than a line is never cut; it stands alone on its line. Widths are measured before styling,
 * so escape sequences take no room. Without a width, the paragraph is one line.
 */
export const wrapSegments = (
  segments: ReadonlyArray<Segment>,
  options: { readonly width: number | undefined; readonly indent: string; readonly hang: string }
): Array<string> => {
  const lines: Array<{ readonly lead: string; readonly pieces: Array<Piece> }> = []
  let current = { lead: options.indent, pieces: [] as Array<Piece> }
  let used = displayWidth(options.indent)
  const add = (gap: string, token: Token) => {
    const last = current.pieces.at(-1)
    if (last !== undefined && last.segment === token.segment) last.text += gap + token.word
    else current.pieces.push({ gap, segment: token.segment, text: token.word })
  }
  for (const token of tokensOf(segments)) {
    const wordWidth = displayWidth(token.word)
    if (current.pieces.length === 0) {
      add("", token)
      used += wordWidth
    } else if (options.width === undefined || used + token.gap.length + wordWidth <= options.width) {
      add(token.gap, token)
      used += token.gap.length + wordWidth
    } else {
      lines.push(current)
      current = { lead: options.hang, pieces: [] }
      add("", token)
      used = displayWidth(options.hang) + wordWidth
    }
  }
  lines.push(current)
  return lines.map(
    (line) =>
      line.lead +
      line.pieces
        .map((piece) => {
          const style = segments[piece.segment]?.style
          return piece.gap + (style === undefined ? piece.text : style(piece.text))
        })
        .join("")
  )
}
