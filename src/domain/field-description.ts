import { Option, type Schema, SchemaAST } from "effect"

/**
 * A request field's one description, for everything derived from its schema: MCP's input schema
 * shows it and the CLI's help (`src/cli/request-options.ts`) too. It is kept in the field's JSON
 * Schema annotation rather than as its `description`, which decoding errors quote ("Expected
 * …"): an error keeps saying what was expected (`a number between 1 and 100`). The field's schema
 * must be a refinement (a bounded string or number), whose JSON Schema annotation adds to the
 * schema it refines instead of replacing it.
 */
export const described = <A, I>(schema: Schema.Schema<A, I>, description: string): Schema.Schema<A, I> => {
  if (!SchemaAST.isRefinement(schema.ast)) throw new Error(`describe a bounded field: ${String(schema.ast)}`)
  const existing = Option.getOrElse(SchemaAST.getJSONSchemaAnnotation(schema.ast), () => ({}))
  return schema.annotations({ jsonSchema: { ...existing, description } })
}

/** The description `described` gave a field's schema. */
export const fieldDescription = (ast: SchemaAST.AST): string | undefined => {
  const annotation = Option.getOrUndefined(SchemaAST.getJSONSchemaAnnotation(ast)) as
    | { description?: unknown }
    | undefined
  return typeof annotation?.description === "string" ? annotation.description : undefined
}
