/**
 * JSON for a terminal or a pipe: `JSON.stringify` already escapes C0 controls (ESC included);
 * this also escapes DEL and the C1 range, which it leaves raw and some terminals obey.
 */
export const stringifyForTerminal = (value: unknown): string =>
  JSON.stringify(value, null, 2).replace(
    /[\u007f-\u009f]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`
  )
