import * as NodePath from "node:path"
import { Args, HelpDoc, Options, ValidationError } from "@effect/cli"
import { Effect, Option, Schema, SchemaAST } from "effect"
import { decodeIssues } from "../domain/decode-issues.js"
import { fieldDescription } from "../domain/field-description.js"
import type { NumberBound } from "../domain/read-bounds.js"
import { boundOf } from "../domain/read-bounds-schema.js"
import { KNOWN_AGENTS } from "../retrieval/known-agents.js"
import { boundedOption, choiceOption, TIME_FORMS, timeOption } from "./checked-options.js"

/**
 * A command's options derived from its request schema, so a read's fields are declared once: the
 * schema gives each option its description (the field's `description` annotation, which MCP's
 * input schema shows too), its bounds and default (`boundedNumber`'s annotation), and decodes
 * what the command line gave into the request. What the schema cannot say stays here: a
 * placeholder, a time checked as one, the choices a command line accepts where the wire takes an
 * open string, an option name that differs from the field's, help worded for the command's own
 * action, and a relative path made absolute.
 */

/** How one request field is offered on the command line, beyond what its schema says. */
export interface FieldOption {
  /** The option's name, when not the field's (`source_type` is `--source-type` by default). */
  readonly name?: string
  /** The placeholder in help (`--project DIR`); numbers show N, times TIME, choices themselves. */
  readonly pseudo?: string
  /**
   * The option's help, where the command words the field for its own action (`blctx forget`:
   * "Forget one note, every revision of it.") rather than as the request describes it to agents.
   */
  readonly help?: string
  /** A path: made absolute against the working directory, since the request carries absolute paths. */
  readonly absolute?: true
  /** A date or time: a usage error unless it is one (`timeOption`). */
  readonly time?: true
  /** The values the command line accepts (`choiceOption`). */
  readonly choices?: ReadonlyArray<string>
}

/**
 * The options of a request, by field path (`filters.agent` for a nested field), in the order help
 * lists them. Every field of the schema must be covered.
 */
export type RequestFields = Readonly<Record<string, FieldOption>>

/** The usual ways the reads' shared fields are offered: a directory, a time, one of the known agents. */
export const DIRECTORY_FIELD: FieldOption = { pseudo: "DIR" }
export const TIME_FIELD: FieldOption = { time: true }
export const AGENT_FIELD: FieldOption = { choices: KNOWN_AGENTS }

/** What help says of a TIME placeholder. */
export const TIME_FORMAT = `TIME is ${TIME_FORMS}; without an offset it is UTC.`

/** The option a field is offered as: its name in the field path's last segment, with dashes. */
const optionName = (path: string, field: FieldOption) =>
  field.name ?? (path.split(".").at(-1) as string).replace(/_/g, "-")

/** A `Schema.optional` field's schema without its `undefined`. */
const withoutUndefined = (ast: SchemaAST.AST): SchemaAST.AST => {
  if (!SchemaAST.isUnion(ast)) return ast
  const defined = ast.types.filter((t) => !SchemaAST.isUndefinedKeyword(t))
  return defined.length === 1 ? (defined[0] as SchemaAST.AST) : ast
}

/** The schema of the field at `path` (the encoded side, refinements and annotations kept). */
const fieldAst = (root: SchemaAST.AST, path: string): SchemaAST.AST =>
  path.split(".").reduce((node, name) => {
    const literal = withoutUndefined(node)
    const field = SchemaAST.isTypeLiteral(literal) ? literal.propertySignatures.find((p) => p.name === name) : undefined
    if (field === undefined) throw new Error(`the request schema has no field ${path}`)
    return withoutUndefined(field.type)
  }, SchemaAST.encodedBoundAST(root))

/** The field's description for a person at a terminal: a field named in backquotes is its option. */
const helpText = (description: string, names: ReadonlyMap<string, string>) =>
  description.replace(/`([a-z_]+)`/g, (whole, field: string) => {
    const name = names.get(field)
    return name === undefined ? whole : `--${name}`
  })

const describedBy = (ast: SchemaAST.AST, path: string, field: FieldOption) => {
  const description = field.help ?? fieldDescription(ast)
  if (description === undefined) throw new Error(`the request field ${path} has no description`)
  return description
}

type FieldValue = Option.Option<string | number> | string | number

/** One field's option: its value is an Option unless the field has a default. */
const fieldOption = (
  name: string,
  ast: SchemaAST.AST,
  field: FieldOption,
  description: string
): Options.Options<FieldValue> => {
  const bound: NumberBound | undefined = boundOf(ast)
  if (bound !== undefined) {
    const fallback = bound.fallback
    const option = boundedOption(
      name,
      bound,
      fallback === undefined ? description : `${description} Default: ${fallback}.`
    )
    return fallback === undefined ? Options.optional(option) : Options.withDefault(option, fallback)
  }
  if (field.time === true) return Options.optional(timeOption(name, `${description} ${TIME_FORMAT}`))
  if (field.choices !== undefined) return Options.optional(choiceOption(name, field.choices, description))
  const given = Options.text(name).pipe(Options.withDescription(description))
  const text = field.absolute === true ? Options.map(given, (path) => NodePath.resolve(path)) : given
  return Options.optional(field.pseudo === undefined ? text : Options.withPseudoName(text, field.pseudo))
}

/** The record the options gave, nested by field path, without the options left out. */
const assemble = (values: Readonly<Record<string, FieldValue>>): Record<string, unknown> => {
  const request: Record<string, unknown> = {}
  for (const [path, raw] of Object.entries(values)) {
    const value = Option.isOption(raw) ? Option.getOrUndefined(raw) : raw
    if (value === undefined) continue
    const names = path.split(".")
    let into = request
    for (const name of names.slice(0, -1)) {
      into[name] ??= {}
      into = into[name] as Record<string, unknown>
    }
    into[names.at(-1) as string] = value
  }
  return request
}

/** A request schema: a `Schema.Struct` (its fields are what the options cover). */
type RequestSchema<A, I> = Schema.Schema<A, I> & { readonly fields: Readonly<Record<string, unknown>> }

/** Every field of the schema is offered (directly, or through its nested fields). */
const checkCovered = (schema: { readonly fields: Readonly<Record<string, unknown>> }, fields: RequestFields) => {
  const paths = Object.keys(fields)
  for (const name of Object.keys(schema.fields)) {
    if (!paths.some((p) => p === name || p.startsWith(`${name}.`))) {
      throw new Error(`the request field ${name} has no command-line option`)
    }
  }
}

/**
 * The options of a command that sends `schema`'s request: one per entry of `fields`, described,
 * bounded and defaulted by the schema, and decoded with it into the request (defaults filled in).
 * A value the options accept but the schema refuses (a path longer than a request carries) is a
 * usage error naming the option.
 */
export const requestOptions = <A, I>(schema: RequestSchema<A, I>, fields: RequestFields): Options.Options<A> => {
  checkCovered(schema, fields)
  const names = new Map(
    Object.entries(fields).map(([path, f]) => [path.split(".").at(-1) as string, optionName(path, f)])
  )
  const options: Record<string, Options.Options<FieldValue>> = {}
  for (const [path, field] of Object.entries(fields)) {
    const ast = fieldAst(schema.ast, path)
    options[path] = fieldOption(optionName(path, field), ast, field, helpText(describedBy(ast, path, field), names))
  }
  const decode = Schema.decodeUnknown(schema, { errors: "all" })
  return Options.all(options).pipe(
    Options.mapEffect((values) =>
      decode(assemble(values)).pipe(
        Effect.mapError((error) => {
          const issue = decodeIssues(error)[0]
          const field = issue?.field.split(".").at(-1) ?? ""
          const option = names.get(field)
          const message = `${option === undefined ? "the options" : `--${option}`} ${issue?.problem ?? "are invalid"}`
          return ValidationError.invalidValue(HelpDoc.p(message))
        })
      )
    )
  )
}

/** How one request field is taken as a command's positional argument. */
export interface FieldArgument {
  /** The argument's name, when not the field's with dashes (`note_id` is `<note-id>`). */
  readonly name?: string
  /** Its help, where the command words it otherwise than the field's description. */
  readonly help?: string
  /** The usage error for a value the schema refuses, in the command's words. */
  readonly refused: (given: string) => string
}

/**
 * A command's positional argument for one field of `schema`'s request, decoded with the schema
 * into the request, so a value the request would refuse is a usage error, never a daemon call.
 */
export const requestArgument = <A, I>(
  schema: RequestSchema<A, I>,
  path: string,
  argument: FieldArgument
): Args.Args<A> => {
  const ast = fieldAst(schema.ast, path)
  const decode = Schema.decodeUnknown(schema)
  return Args.text({ name: argument.name ?? optionName(path, {}) }).pipe(
    Args.withDescription(argument.help ?? describedBy(ast, path, {})),
    Args.mapEffect((given) =>
      decode(assemble({ [path]: given })).pipe(Effect.mapError(() => HelpDoc.p(argument.refused(given))))
    )
  )
}

/**
 * One option as plain data, for a reader that cannot load effect (the search fast path,
 * `fast-search.ts`): the option, the request field it sets, and what it accepts.
 */
export interface OptionRow {
  readonly option: string
  readonly path: ReadonlyArray<string>
  /** A number within this bound (its fallback is the field's default). */
  readonly bound?: NumberBound
  /** One of these. */
  readonly choices?: ReadonlyArray<string>
}

/** The options `requestOptions` derives from the same schema and fields, as data. */
export const optionRows = (
  schema: { readonly ast: SchemaAST.AST; readonly fields: Readonly<Record<string, unknown>> },
  fields: RequestFields
): ReadonlyArray<OptionRow> => {
  checkCovered(schema, fields)
  return Object.entries(fields).map(([path, field]) => {
    const bound = boundOf(fieldAst(schema.ast, path))
    return {
      option: `--${optionName(path, field)}`,
      path: path.split("."),
      ...(bound === undefined ? {} : { bound }),
      ...(field.choices === undefined ? {} : { choices: field.choices })
    }
  })
}
