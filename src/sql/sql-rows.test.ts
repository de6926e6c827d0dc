import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Schema } from "effect"
import { countOf, firstRowOf, rowsOf } from "./sql-rows.js"

const Row = Schema.Struct({ id: Schema.Number, name: Schema.String })
const rows = rowsOf(Row)
const firstRow = firstRowOf(Row)

describe("rows read by schema", () => {
  it.layer(SqliteClient.layer({ filename: ":memory:" }))((it) => {
    it.effect("decodes the rows a query returns, and the first of them", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const query = sql`SELECT 1 AS id, 'a' AS name UNION ALL SELECT 2, 'b'`
        expect(yield* rows(query)).toEqual([
          { id: 1, name: "a" },
          { id: 2, name: "b" }
        ])
        expect(yield* firstRow(query)).toEqual(Option.some({ id: 1, name: "a" }))
        expect(yield* firstRow(sql`SELECT 1 AS id, 'a' AS name WHERE 0`)).toEqual(Option.none())
      })
    )

    it.effect("a column that is not what the row declares fails as the read's SqlError, naming it", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const error = yield* Effect.flip(rows(sql`SELECT 1 AS id, NULL AS name`))
        expect(error._tag).toBe("SqlError")
        expect(error.message).toContain("a row read does not have the declared columns")
        expect(error.message).toContain('["name"]')
        const renamed = yield* Effect.flip(firstRow(sql`SELECT 1 AS chunk_id, 'a' AS name`))
        expect(renamed.message).toContain('["id"]')
      })
    )

    it.effect("a count is its number; no row or NULL is 0, a text is an error", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        expect(yield* countOf(sql`SELECT 7 AS n`)).toBe(7)
        expect(yield* countOf(sql`SELECT sum(x) AS n FROM (SELECT 1 AS x WHERE 0)`)).toBe(0)
        expect(yield* countOf(sql`SELECT 1 AS n WHERE 0`)).toBe(0)
        expect((yield* Effect.flip(countOf(sql`SELECT 'seven' AS n`)))._tag).toBe("SqlError")
      })
    )
  })
})
