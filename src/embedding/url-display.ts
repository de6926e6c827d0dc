/**
 * Text that may contain URLs, safe to print: the password of every `scheme://user:password@`
 * is replaced by `***` (a mirror's URL may carry credentials; they never reach a report or a log).
 * The password runs to the last `@` before the path, as URL parsers read it.
 */
export const redactUrlCredentials = (text: string): string =>
  text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#@:]*):([^\s/?#]*)@/gi, "$1$2:***@")
