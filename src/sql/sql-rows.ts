import { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, type ParseResult, Schema } from "effect"

/**
 * Rows read through a schema. A query's rows arrive as `unknown`: decoding them here means a
 * column that drifts from its declared type (a renamed alias, a NULL where a number was expected)
 * fails at the read instead of flowing on as a wrongly typed value. It fails as the SqlError of
 * that read (the ParseError its cause): a row the code cannot read is a database failure like any
 * other, so each repository's one mapping of SqlError to its store error covers it. Each decoder
 * is built once, where it is declared, so a read in a hot path pays only for the decode itself.
 */
type Query<E, R> = Effect.Effect<ReadonlyArray<unknown>, E, R>

const undeclared = (cause: ParseResult.ParseError) =>
  new SqlError({ cause, message: `a row read does not have the declared columns: ${cause.message}` })

/** Every row of a query, decoded by `Row`. */
export const rowsOf = <A, I>(Row: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknown(Schema.Array(Row))
  return <E, R>(query: Query<E, R>): Effect.Effect<ReadonlyArray<A>, E | SqlError, R> =>
    Effect.flatMap(query, (rows) => Effect.mapError(decode(rows), undeclared))
}

/** The first row of a query, if any, decoded by `Row`. */
export const firstRowOf = <A, I>(Row: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknown(Row)
  return <E, R>(query: Query<E, R>): Effect.Effect<Option.Option<A>, E | SqlError, R> =>
    Effect.flatMap(query, (rows) =>
      rows.length === 0 ? Effect.succeedNone : Effect.asSome(Effect.mapError(decode(rows[0]), undeclared))
    )
}

/** A row with one number `n`: a count, an EXISTS, a sum or max (NULL over no rows). */
export const CountRow = Schema.Struct({ n: Schema.NullOr(Schema.Number) })

const firstCount = firstRowOf(CountRow)

/** The `n` of a query's first row (`SELECT count(*) AS n ...`); no row or NULL is 0. */
export const countOf = <E, R>(query: Query<E, R>) =>
  firstCount(query).pipe(Effect.map((row) => Option.getOrElse(row, () => ({ n: 0 })).n ?? 0))

/** A `meta` row's value. */
export const MetaRow = Schema.Struct({ value: Schema.String })

/** A row naming one integer id (`RETURNING id`, `SELECT id`). */
export const IdRow = Schema.Struct({ id: Schema.Number })
/** A row naming one text id (jobs). */
export const TextIdRow = Schema.Struct({ id: Schema.String })
/** A row naming one chunk (`RETURNING chunk_id`). */
export const ChunkIdRow = Schema.Struct({ chunk_id: Schema.Number })
/** A chunk or message and its text, to embed. */
export const TextRow = Schema.Struct({ id: Schema.Number, text: Schema.String })

/** The `{ id }` rows a query returns. */
export const idRows = rowsOf(IdRow)
/** The `{ id }` rows (text ids) a query returns. */
export const textIdRows = rowsOf(TextIdRow)
