import type { SqlClient } from "@effect/sql"
import { Data, Effect, Schema } from "effect"
import { MAX_SOURCE_TYPE_CHARS } from "../history/source-type.js"
import { KNOWN_AGENTS } from "./known-agents.js"

/** An `agent` filter must name one of the known agents (`known-agents.ts`). */
export { KNOWN_AGENTS, type KnownAgent } from "./known-agents.js"

/**
 * The `agent` filter of search, recent and context: an open, bounded string on the wire (a
 * client built before a new agent still decodes it), checked against `KNOWN_AGENTS` where the
 * read runs, so an unknown or misspelt agent is an `InvalidQuery` naming the known ones rather
 * than an empty answer.
 */
export const AgentFilter = Schema.String.pipe(Schema.maxLength(MAX_SOURCE_TYPE_CHARS)).annotations({
  identifier: "AgentFilter",
  description: `Only this agent's history: ${KNOWN_AGENTS.join(" or ")}. Transcript messages of other agents are left out; notes (authored_update) stay unless their session belongs to another agent. Without it, every agent's history.`,
  examples: [...KNOWN_AGENTS]
})

/** An `agent` filter naming no agent blctx knows. */
export class UnknownAgent extends Data.TaggedError("UnknownAgent")<{ readonly agent: string }> {}

/** The filter's agent, or `UnknownAgent`; `undefined` (no filter) passes. */
export const checkAgent = (agent: string | undefined): Effect.Effect<string | undefined, UnknownAgent> =>
  agent === undefined || (KNOWN_AGENTS as ReadonlyArray<string>).includes(agent)
    ? Effect.succeed(agent)
    : Effect.fail(new UnknownAgent({ agent }))

/**
 * The agent of message `m`, as a SQL expression. A transcript message's own `agent`. A note has
 * none of its own (notes are shared memory): it is the agent whose hook binding opened the note's
 * blctx session, when the session was opened with the binding key the hooks gave that agent
 * (`context_sessions.binding_key = capture_bindings.binding_key`), and NULL otherwise.
 */
export const MESSAGE_AGENT = `COALESCE(m.agent, (SELECT b.agent FROM context_sessions s
  JOIN capture_bindings b ON b.binding_key = s.binding_key WHERE s.id = m.session_id))`

/**
 * The WHERE clause of an agent filter on message `m`: transcript messages of that agent, and
 * every note except those whose session the hooks tie to another agent (see `MESSAGE_AGENT`). A
 * transcript row of another agent is decided by its own column, without the lookup.
 */
export const agentClause = (sql: SqlClient.SqlClient, agent: string) =>
  sql`(m.agent = ${agent} OR (m.note_id IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM context_sessions s JOIN capture_bindings b ON b.binding_key = s.binding_key
    WHERE s.id = m.session_id AND b.agent <> ${agent})))`
