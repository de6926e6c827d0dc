/** Tests only: whether any character a terminal would obey is left raw (C0 but tab and newline, DEL, C1, bidi). */
export const hasRawTerminalControl = (text: string) =>
  [...text].some((ch) => {
    const c = ch.charCodeAt(0)
    return (
      (c < 0x20 && c !== 0x09 && c !== 0x0a) ||
      (c >= 0x7f && c <= 0x9f) ||
      (c >= 0x202a && c <= 0x202e) ||
      (c >= 0x2066 && c <= 0x2069)
    )
  })
