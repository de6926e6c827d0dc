import * as Fs from "node:fs"
import * as NodePath from "node:path"

/**
 * The DOM and script sinks the viewer's page never uses: each parses a string as markup or as
 * code, which is how text from history would become HTML or script. The page builds every node
 * with `el` (src/ui/page/el.ts) instead.
 */
export const HTML_SINKS = [
  /\binnerHTML\b/,
  /\bouterHTML\b/,
  /\binsertAdjacentHTML\b/,
  /\bdocument\s*\.\s*write(?:ln)?\b/,
  /\bcreateContextualFragment\b/,
  /\bDOMParser\b/,
  /(?<![.\w])eval\s*\(/,
  /\bnew\s+Function\s*\(/,
  /\bsetAttribute\s*\(\s*["'`]on/i
] as const

/** Each use of a sink in the folder's TypeScript, HTML and CSS files, as `file:line: text`. */
export const htmlSinksIn = (dir: string): Array<string> => {
  const found: Array<string> = []
  for (const entry of Fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !/\.(ts|html|css)$/.test(entry.name) || entry.name.endsWith(".test.ts")) continue
    const file = NodePath.join(entry.parentPath, entry.name)
    Fs.readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (HTML_SINKS.some((sink) => sink.test(line))) found.push(`${file}:${i + 1}: ${line.trim()}`)
      })
  }
  return found
}
