import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { firstRowOf, MetaRow } from "../sql/sql-rows.js"
import { REDACTION_RULES_VERSION } from "./redact.js"

/** The `meta` key of the rules version the stored text is redacted with. */
export const RULES_VERSION_KEY = "redaction_rules_version"

const metaValue = firstRowOf(MetaRow)

/** The rules version of the stored text: 1 when none is stored (every database from before it was). */
export const storedRulesVersion = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const row = yield* metaValue(sql`SELECT value FROM meta WHERE key = ${RULES_VERSION_KEY}`)
  const version = Number.parseInt(Option.match(row, { onNone: () => "1", onSome: (r) => r.value }), 10)
  return Number.isSafeInteger(version) && version >= 1 ? version : 1
})

/** Records that every stored text is redacted with `version`'s rules. */
export const storeRulesVersion = (version: number) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`INSERT INTO meta (key, value) VALUES (${RULES_VERSION_KEY}, ${String(version)})
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value`
  )

/**
 * Stamps the current rules version on a database that holds no text yet (a new one): nothing in
 * it was redacted by older rules. A database with rows and no version keeps none, so the daemon
 * redacts it again.
 */
export const stampRulesVersionWhenEmpty = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql`INSERT INTO meta (key, value)
    SELECT ${RULES_VERSION_KEY}, ${String(REDACTION_RULES_VERSION)}
    WHERE NOT EXISTS (SELECT 1 FROM messages) AND NOT EXISTS (SELECT 1 FROM sessions)
      AND NOT EXISTS (SELECT 1 FROM context_sessions)
    ON CONFLICT (key) DO NOTHING`
)
