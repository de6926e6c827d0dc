import { Rpc, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"
import { ImportNotesRequest, ImportNotesResponse } from "../export/import-contract.js"
import { ExportPageRequest, ExportPageResponse } from "../retrieval/export-format.js"
import { InvalidQuery } from "../retrieval/invalid-query.js"
import { DaemonStoreError } from "./errors.js"

// Export and restore. The request and answer schemas are defined once in src/export; the
// procedures below only name them.

/** One page of an export (a read, answered by the query workers). */
export const ExportPage = Rpc.make("ExportPage", {
  payload: ExportPageRequest,
  success: ExportPageResponse,
  error: Schema.Union(InvalidQuery, DaemonStoreError)
})

/** Restores one batch of an export's sessions and notes on the writer connection. */
export const ImportNotes = Rpc.make("ImportNotes", {
  payload: ImportNotesRequest,
  success: ImportNotesResponse,
  error: DaemonStoreError
})

/** The restore write; `ExportPage` is a forwarded read (`history-protocol.ts`). */
export class ExportRpcs extends RpcGroup.make(ImportNotes) {}
