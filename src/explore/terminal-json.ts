/** JSON for a terminal or a pipe: one function for the whole CLI (see src/terminal/sanitize.ts). */
export { stringifyForTerminal } from "../terminal/sanitize.js"
