import { Schema } from "effect"
import { JobView } from "../jobs/job.js"
import { IndexState, QueryMode } from "./contract.js"
import { Coverage } from "./coverage.js"

/** The facts the index state is judged from, read in one go. */
export class IndexStatus extends Schema.Class<IndexStatus>("IndexStatus")({
  messages: Schema.Int,
  chunks_without_vector: Schema.Int,
  active_kinds: Schema.Array(Schema.String),
  recent_jobs: Schema.Array(JobView)
}) {}

/** What the index covers and whether search can use vectors: `blctx index-status`, MCP `context_status`. */
export class ContextStatusResponse extends Schema.Class<ContextStatusResponse>("ContextStatusResponse")({
  index_state: IndexState,
  query_mode: QueryMode,
  query_mode_reason: Schema.NullOr(Schema.String),
  model_fingerprint: Schema.NullOr(Schema.String),
  coverage: Coverage,
  recent_jobs: Schema.Array(JobView)
}) {}
