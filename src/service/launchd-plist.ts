import { Either } from "effect"
import type { ServiceSpec } from "./service-spec.js"

/**
 * The LaunchAgent property list blctx writes for an installation's daemon (macOS), and a strict
 * reader of the XML property-list format for checking it: the same structure `plutil -lint`
 * accepts (an XML declaration, Apple's DOCTYPE, one `<plist version="1.0">` holding one value;
 * dictionaries of `<key>`/value pairs with unique keys; strings, integers, booleans, arrays).
 */

/** The label launchd knows the daemon by: one per installation, like the systemd unit's name. */
export const launchdLabel = (spec: ServiceSpec) => `dev.blctx.${spec.name}`

export const LAUNCHD_UMASK = 0o177
/** Seconds launchd waits before starting the daemon again after it exited (its default is 10). */
export const LAUNCHD_THROTTLE_SECONDS = 1

const escapeXml = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;")

/** The plist this version writes, byte for byte (verify compares against it). */
export const renderPlist = (spec: ServiceSpec): string =>
  [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    '<plist version="1.0">',
    "<dict>",
    "  <key>Label</key>",
    `  <string>${escapeXml(launchdLabel(spec))}</string>`,
    "  <key>ProgramArguments</key>",
    "  <array>",
    ...spec.command.map((word) => `    <string>${escapeXml(word)}</string>`),
    "  </array>",
    "  <key>EnvironmentVariables</key>",
    "  <dict>",
    ...Object.entries(spec.environment).flatMap(([name, value]) => [
      `    <key>${escapeXml(name)}</key>`,
      `    <string>${escapeXml(value)}</string>`
    ]),
    "  </dict>",
    "  <key>RunAtLoad</key>",
    "  <true/>",
    // Restarted when it fails; a daemon that exits 0 (uninstalled, its socket gone) stays down.
    "  <key>KeepAlive</key>",
    "  <dict>",
    "    <key>SuccessfulExit</key>",
    "    <false/>",
    "  </dict>",
    "  <key>ThrottleInterval</key>",
    `  <integer>${LAUNCHD_THROTTLE_SECONDS}</integer>`,
    "  <key>ProcessType</key>",
    "  <string>Background</string>",
    "  <key>Umask</key>",
    `  <integer>${LAUNCHD_UMASK}</integer>`,
    "  <key>StandardOutPath</key>",
    `  <string>${escapeXml(spec.logFile)}</string>`,
    "  <key>StandardErrorPath</key>",
    `  <string>${escapeXml(spec.logFile)}</string>`,
    "</dict>",
    "</plist>",
    ""
  ].join("\n")

export type PlistValue = string | number | boolean | ReadonlyArray<PlistValue> | { readonly [key: string]: PlistValue }

const unescapeXml = (text: string) =>
  text
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&quot;", '"')
    .replaceAll("&apos;", "'")
    .replaceAll("&amp;", "&")

/** A reader over the tags of a plist body; comments and whitespace between tags are skipped. */
const tokenize = (body: string): Either.Either<ReadonlyArray<string>, string> => {
  const tokens: Array<string> = []
  const pattern = /<!--[\s\S]*?-->|<[^>]+>|[^<]+/g
  for (const match of body.matchAll(pattern)) {
    const token = match[0]
    if (token.startsWith("<!--")) continue
    if (!token.startsWith("<") && token.trim() === "") continue
    tokens.push(token)
  }
  return Either.right(tokens)
}

/**
 * Parses an XML property list (the subset LaunchAgents use: dict, array, string, integer, real,
 * true, false). Fails with what is wrong and where, as `plutil -lint` would refuse the file.
 */
export const parsePlist = (text: string): Either.Either<PlistValue, string> => {
  const header =
    /^\s*<\?xml version="1\.0" encoding="UTF-8"\?>\s*<!DOCTYPE plist PUBLIC "-\/\/Apple\/\/DTD PLIST 1\.0\/\/EN" "http:\/\/www\.apple\.com\/DTDs\/PropertyList-1\.0\.dtd">\s*<plist version="1\.0">([\s\S]*)<\/plist>\s*$/.exec(
      text
    )
  if (header === null) return Either.left("not an XML property list (declaration, DOCTYPE or <plist> element missing)")
  return Either.flatMap(tokenize(header[1] ?? ""), (tokens) => {
    let at = 0
    const next = () => tokens[at++]
    const value = (): Either.Either<PlistValue, string> => {
      const open = next()
      switch (open) {
        case "<true/>":
          return Either.right(true)
        case "<false/>":
          return Either.right(false)
        case "<string/>":
          return Either.right("")
        case "<array/>":
          return Either.right([])
        case "<dict/>":
          return Either.right({})
        case "<string>":
        case "<integer>":
        case "<real>": {
          const tag = open.slice(1, -1)
          let content = next() ?? ""
          if (content === `</${tag}>`) {
            if (tag !== "string") return Either.left(`empty <${tag}>`)
            return Either.right("")
          }
          if (next() !== `</${tag}>`) return Either.left(`<${tag}> is not closed`)
          content = unescapeXml(content)
          if (tag === "string") return Either.right(content)
          const n = Number(content.trim())
          if (!Number.isFinite(n) || (tag === "integer" && !/^\s*[+-]?\d+\s*$/.test(content))) {
            return Either.left(`<${tag}> holds ${JSON.stringify(content)}`)
          }
          return Either.right(n)
        }
        case "<array>": {
          const items: Array<PlistValue> = []
          while (tokens[at] !== "</array>") {
            if (at >= tokens.length) return Either.left("<array> is not closed")
            const item = value()
            if (Either.isLeft(item)) return item
            items.push(item.right)
          }
          at++
          return Either.right(items)
        }
        case "<dict>": {
          const dict: Record<string, PlistValue> = {}
          while (tokens[at] !== "</dict>") {
            if (at >= tokens.length) return Either.left("<dict> is not closed")
            if (next() !== "<key>")
              return Either.left(`a <dict> entry does not start with <key> (at ${tokens[at - 1]})`)
            const key = unescapeXml(next() ?? "")
            if (next() !== "</key>") return Either.left(`<key>${key} is not closed`)
            if (key in dict) return Either.left(`key ${key} appears twice`)
            const item = value()
            if (Either.isLeft(item)) return item
            dict[key] = item.right
          }
          at++
          return Either.right(dict)
        }
        default:
          return Either.left(`unexpected ${open === undefined ? "end of file" : open}`)
      }
    }
    const root = value()
    if (Either.isRight(root) && at !== tokens.length)
      return Either.left(`unexpected ${tokens[at]} after the root value`)
    return root
  })
}

/** What launchd reads from a LaunchAgent, checked: the fields blctx's plist sets. */
export interface LaunchAgent {
  readonly label: string
  readonly programArguments: ReadonlyArray<string>
  readonly runAtLoad: boolean
  readonly restartOnFailure: boolean
  readonly logFile: string | undefined
}

export const readLaunchAgent = (text: string): Either.Either<LaunchAgent, string> =>
  Either.flatMap(parsePlist(text), (root) => {
    if (typeof root !== "object" || Array.isArray(root)) return Either.left("the root value is not a <dict>")
    const dict = root as { readonly [key: string]: PlistValue }
    const label = dict.Label
    const args = dict.ProgramArguments
    if (typeof label !== "string" || label === "") return Either.left("Label is missing or not a string")
    if (!Array.isArray(args) || args.length === 0 || !args.every((a) => typeof a === "string")) {
      return Either.left("ProgramArguments is missing or not an array of strings")
    }
    const keepAlive = dict.KeepAlive
    const restartOnFailure =
      keepAlive === true ||
      (typeof keepAlive === "object" &&
        !Array.isArray(keepAlive) &&
        (keepAlive as Record<string, PlistValue>).SuccessfulExit === false)
    const out = dict.StandardOutPath
    return Either.right({
      label,
      programArguments: args as ReadonlyArray<string>,
      runAtLoad: dict.RunAtLoad === true,
      restartOnFailure,
      logFile: typeof out === "string" ? out : undefined
    })
  })
