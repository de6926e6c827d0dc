/**
 * What a failed decoding says, short and safe to show: the path of each field at fault and the
 * bound it broke, quoting at most a short, redacted prefix of what was given.
 *
 * Effect's own formatters (`TreeFormatter`, `ArrayFormatter`) put the whole actual value in the
 * message: a 100,000-character argument came back twice in its error, credential and all, and
 * went to the log too. Every place that decodes input from outside (MCP tool arguments, the CLI,
 * the daemon's requests) formats its failures here instead.
 */
import { SchemaAST as AST, Effect, Option, type ParseResult, type Schema } from "effect"
import { redactSecrets } from "../redaction/redact.js"

/** How many characters of a given value an error may quote. */
export const MAX_QUOTED_CHARS = 40
/** How many problems one error lists; the rest are counted. */
export const MAX_LISTED_ISSUES = 10
/** How long one problem's text may be (a schema's own message, its description). */
const MAX_PROBLEM_CHARS = 240
/** How much of what a schema expects is said (its description may be a paragraph). */
const MAX_EXPECTED_CHARS = 120
/**
 * How much of a long string is redacted before its prefix is cut: a credential that starts within
 * the quoted prefix is whole inside this window (a private key block included), so it is found.
 */
const REDACTION_WINDOW_CHARS = 16_384

/** One problem: the field's path (dotted, "" for the whole value), what kind of problem, and what. */
export interface DecodeIssue {
  readonly field: string
  readonly kind: "invalid" | "missing" | "unexpected" | "forbidden"
  readonly problem: string
}

const thousands = (n: number) => n.toLocaleString("en-US")

/** Text cut to `max` characters, marked when cut. */
const cut = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max)}…`)

/** Text that came from outside, redacted, at most `max` characters. */
const redactedPrefix = (text: string, max: number) =>
  cut(redactSecrets(text.length > REDACTION_WINDOW_CHARS ? text.slice(0, REDACTION_WINDOW_CHARS) : text).text, max)

/**
 * A value as an error may show it: a string quoted (at most 40 characters, redacted, with its
 * length when longer), a number or the like as itself, an array or object only by its shape.
 */
export const quoteValue = (value: unknown): string => {
  if (typeof value === "string") {
    const quoted = JSON.stringify(redactedPrefix(value, MAX_QUOTED_CHARS))
    return value.length <= MAX_QUOTED_CHARS ? quoted : `${quoted} (${thousands(value.length)} characters)`
  }
  if (Array.isArray(value)) return `an array of ${thousands(value.length)} items`
  if (typeof value === "object" && value !== null) return "an object"
  if (typeof value === "function") return "a function"
  return cut(String(value), MAX_QUOTED_CHARS)
}

/** A path segment: a plain key (no credential in it) as itself, anything else quoted like a value. */
const formatKey = (key: PropertyKey): string => {
  if (typeof key === "number") return String(key)
  const text = typeof key === "symbol" ? String(key) : key
  return /^[A-Za-z0-9_$-]{1,40}$/.test(text) && redactSecrets(text).total === 0 ? text : quoteValue(text)
}

/** A message a schema gives (our own wording), or undefined; Effect-valued messages are not run. */
const annotatedMessage = (issue: ParseResult.ParseIssue): { message: string; override: boolean } | undefined => {
  if (!("ast" in issue)) return undefined
  const annotation = AST.getMessageAnnotation(issue.ast)
  if (Option.isNone(annotation)) return undefined
  // Our own short message (below) speaks for the tree it is on: walking that tree skips it.
  if (annotation.value === shortMessage) return undefined
  const given = annotation.value(issue)
  if (typeof given === "string") return { message: given, override: false }
  if (Effect.isEffect(given)) return undefined
  return typeof given.message === "string" ? { message: given.message, override: given.override } : undefined
}

/**
 * The message that speaks for `issue`, as Effect decides it: a wrapper's (union, transformation,
 * refinement's source side) own message gives way to its inner one unless it overrides.
 */
const messageOf = (issue: ParseResult.ParseIssue): string | undefined => {
  const own = annotatedMessage(issue)
  if (own === undefined) return undefined
  const inner =
    !own.override &&
    (issue._tag === "Composite" ||
      (issue._tag === "Refinement" && issue.kind === "From") ||
      (issue._tag === "Transformation" && issue.kind !== "Transformation"))
  if (!inner) return own.message
  return issue._tag === "Refinement" || issue._tag === "Transformation" ? messageOf(issue.issue) : undefined
}

/** What a refinement expects, as Effect words it (its description, else its title). */
const expectedOf = (ast: AST.AST): string => {
  if (!AST.isRefinement(ast)) return String(ast)
  return AST.getDescriptionAnnotation(ast).pipe(
    Option.orElse(() => AST.getTitleAnnotation(ast)),
    Option.orElse(() => AST.getIdentifierAnnotation(ast)),
    Option.getOrElse(() => `${String(ast.from)} with a condition`)
  )
}

const typeProblem = (issue: ParseResult.Type) =>
  messageOf(issue) ??
  issue.message ??
  `Expected ${cut(expectedOf(issue.ast), MAX_EXPECTED_CHARS)}, actual ${quoteValue(issue.actual)}`

const missingProblem = (issue: ParseResult.Missing) => {
  const annotation = AST.getMissingMessageAnnotation(issue.ast)
  const given = Option.isSome(annotation) ? annotation.value() : undefined
  return typeof given === "string" ? given : (issue.message ?? "is missing")
}

/**
 * An optional field's schema is a union with `undefined`, whose complaint ("Expected undefined")
 * says nothing anyone can use beside the other member's.
 */
const isUndefinedMember = (issue: ParseResult.ParseIssue) => issue._tag === "Type" && AST.isUndefinedKeyword(issue.ast)

/** Walks the issue tree depth first, in Effect's order: one entry per leaf. */
const walk = (issue: ParseResult.ParseIssue, path: ReadonlyArray<PropertyKey>): Array<DecodeIssue> => {
  const one = (kind: DecodeIssue["kind"], problem: string): Array<DecodeIssue> => [
    { field: path.map(formatKey).join("."), kind, problem: redactedPrefix(problem, MAX_PROBLEM_CHARS) }
  ]
  switch (issue._tag) {
    case "Type":
      return one("invalid", typeProblem(issue))
    case "Missing":
      return one("missing", missingProblem(issue))
    case "Unexpected":
      return one("unexpected", issue.message ?? "is unexpected")
    case "Forbidden":
      return one("forbidden", issue.message ?? "is forbidden")
    case "Pointer":
      return walk(issue.issue, path.concat(issue.path))
    case "Composite": {
      const message = messageOf(issue)
      if (message !== undefined) return one("invalid", message)
      const inner = Array.isArray(issue.issues) ? issue.issues : [issue.issues as ParseResult.ParseIssue]
      return (inner.length > 1 ? inner.filter((i) => !isUndefinedMember(i)) : inner).flatMap((i) => walk(i, path))
    }
    case "Refinement":
    case "Transformation": {
      const message = messageOf(issue)
      return message !== undefined ? one("invalid", message) : walk(issue.issue, path)
    }
  }
}

/** Every problem of a failed decoding, in Effect's order, each short and redacted. */
export const decodeIssues = (failure: ParseResult.ParseError | ParseResult.ParseIssue): ReadonlyArray<DecodeIssue> =>
  walk(failure._tag === "ParseError" ? failure.issue : failure, [])

/**
 * One line for a failed decoding: `field: problem` for at most ten problems, the rest counted.
 * `root` names the whole value (a tool's arguments, a request).
 */
export const describeIssues = (issues: ReadonlyArray<DecodeIssue>, root = "(value)"): string => {
  const listed = issues.slice(0, MAX_LISTED_ISSUES).map((i) => `${i.field === "" ? root : i.field}: ${i.problem}`)
  const rest = issues.length - listed.length
  return rest > 0 ? `${listed.join("; ")}; and ${thousands(rest)} more` : listed.join("; ")
}

/** `describeIssues` of a failure. */
export const describeDecodeError = (failure: ParseResult.ParseError | ParseResult.ParseIssue, root?: string): string =>
  describeIssues(decodeIssues(failure), root)

/**
 * Effect's formatters (a ParseError's own message, `TreeFormatter`, `ArrayFormatter`) say what
 * `describeDecodeError` says for a schema carrying this message: for code that formats errors
 * we do not own (@effect/rpc answers a request it cannot decode with `TreeFormatter`).
 */
const shortMessage = (issue: ParseResult.ParseIssue) => ({ message: describeDecodeError(issue), override: true })

/** `schema` whose failures, however formatted, are `describeDecodeError`'s short, redacted text. */
export const withShortDecodeErrors = <S extends Schema.Annotable.All>(schema: S): S =>
  schema.annotations({ message: shortMessage }) as S
