import { Rpc, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"
import { BoundedId } from "../domain/bounded-text.js"
import { InstallationId } from "../domain/installation-id.js"
import { JobId, JobView } from "../jobs/job.js"
import { IndexState, QueryMode } from "../retrieval/contract.js"
import { Admission } from "./admission.js"
import { DaemonStopping } from "./daemon-stopping.js"
import { DaemonStoreError, InvalidJobParams, JobNotFound, UnknownJobKind } from "./errors.js"
import { ExportRpcs } from "./export-protocol.js"
import { ForgetRpcs } from "./forget-protocol.js"
import { HistoryRpcs } from "./history-protocol.js"
import { NotesRpcs } from "./notes-protocol.js"
import { OpenUiRequest, OpenUiResponse, UiAlreadyServing, UiListenFailed } from "./open-ui-contract.js"
import { withShortRequestErrors } from "./short-decode-errors.js"

/** Who answered: enough for a caller to check it reached the daemon of the right installation. */
export class DaemonIdentity extends Schema.Class<DaemonIdentity>("DaemonIdentity")({
  installation_id: InstallationId,
  pid: Schema.Int,
  node: Schema.String,
  argv: Schema.Array(Schema.String),
  version: Schema.String,
  db_path: Schema.String,
  schema_version: Schema.Int,
  index_state: IndexState,
  query_mode: QueryMode,
  started_at: Schema.String
}) {}

export class SubmittedJob extends Schema.Class<SubmittedJob>("SubmittedJob")({
  job: JobView,
  superseded: Schema.Array(JobId)
}) {}

/** Fails only when the daemon found a file it holds removed or replaced, and is stopping. */
export const Ping = Rpc.make("Ping", { success: DaemonIdentity, error: DaemonStopping })

export const SubmitJob = Rpc.make("SubmitJob", {
  payload: Schema.Struct({
    kind: BoundedId,
    params: Schema.optional(Schema.Unknown),
    /** Marks queued and running jobs of the same kind superseded (they never run again). */
    supersede: Schema.optionalWith(Schema.Boolean, { default: () => false })
  }),
  success: SubmittedJob,
  error: Schema.Union(UnknownJobKind, InvalidJobParams, DaemonStoreError)
})

export const JobStatus = Rpc.make("JobStatus", {
  payload: { job_id: JobId },
  success: JobView,
  error: Schema.Union(JobNotFound, DaemonStoreError)
})

export const CancelJobs = Rpc.make("CancelJobs", {
  payload: {
    /** Given ids; or every active job of `kind`; or, with neither, every active job. */
    job_ids: Schema.optional(Schema.Array(JobId).pipe(Schema.maxItems(10_000))),
    kind: Schema.optional(BoundedId)
  },
  success: Schema.Struct({ cancelled: Schema.Array(JobId) }),
  error: DaemonStoreError
})

/**
 * Starts the local viewer's HTTP listener on 127.0.0.1 (once per daemon) and mints a one-time
 * link to it (`blctx ui`). Not offered to agents: the MCP server does not expose it.
 */
export const OpenUi = Rpc.make("OpenUi", {
  payload: OpenUiRequest,
  success: OpenUiResponse,
  error: Schema.Union(UiAlreadyServing, UiListenFailed)
})

/**
 * The daemon's protocol, declared once: served by blctxd, consumed by the CLI, MCP and
 * `blctx/client`. A request that does not decode is refused in a short, redacted message; every
 * procedure passes admission control, so any may answer `DaemonBusy`.
 */
export class DaemonRpcs extends withShortRequestErrors(
  RpcGroup.make(Ping, OpenUi, SubmitJob, JobStatus, CancelJobs).merge(HistoryRpcs, NotesRpcs, ForgetRpcs, ExportRpcs)
).middleware(Admission) {}
