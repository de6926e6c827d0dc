import { RpcGroup } from "@effect/rpc"
import { Admission } from "./admission.js"
import { Forget, ForgetPreview } from "./forget-protocol.js"
import { Context, ContextStatus, IndexActivity, Recent, Search, Sessions } from "./history-protocol.js"
import { ListNotes, NoteHistory, UpdateNote } from "./notes-protocol.js"
import { withShortRequestErrors } from "./short-decode-errors.js"

/**
 * What the local viewer (`blctx ui`) may call: a part of the daemon's protocol, the same
 * procedures by the same tags, so the daemon's own handlers answer them and there is no second
 * query path. Jobs, exports and the hook's prompt recall stay off the page.
 */
export class UiRpcs extends withShortRequestErrors(
  RpcGroup.make(
    Search,
    Recent,
    Context,
    Sessions,
    ContextStatus,
    IndexActivity,
    ListNotes,
    NoteHistory,
    UpdateNote,
    ForgetPreview,
    Forget
  )
).middleware(Admission) {}
