import { Effect, FiberSet, Option } from "effect"
import { storedUpdate } from "../notes/note-content.js"
import { chunkNote, embedMessageChunks } from "../notes/note-embedding.js"
import type { LogUpdateRequest, OpenSessionRequest, UpdateNoteRequest } from "../notes/notes-contract.js"
import { makeNotesStore } from "../notes/notes-store.js"
import { redactSecrets } from "../redaction/redact.js"
import { daemonStoreError } from "../rpc/errors.js"
import { StoreError } from "../store/store-error.js"
import { IndexingServices } from "../vectors/import-services.js"
import { WriterDatabase } from "./writer-database.js"

/** A database failure as the protocol reports it; a refusal (conflict, unknown session) passes as it is. */
const toProtocol = <E extends { readonly _tag: string }>(e: E | StoreError) =>
  e instanceof StoreError ? daemonStoreError(e) : (e as Exclude<E, StoreError>)

/**
 * Authored updates, written by the daemon on its writer connection (the one connection that
 * writes the index). A note is committed, chunks and all, before the answer: the acknowledgement
 * means it is stored and found lexically at once. Its vectors follow in a background fiber of the
 * daemon (when a model is loaded); if that fails, the chunks stay pending and the index watcher's
 * repair embeds them, so a note is never lost for want of a vector.
 *
 * A note does not wait for the job queue: it waits only for the write transaction in progress on
 * the connection (one file of an import, one batch of a repair), which the SQLite client
 * serializes with it (`makeNotesStore`).
 */
export const makeNotesHandlers = Effect.gen(function* () {
  const writer = yield* WriterDatabase
  const indexing = yield* IndexingServices
  const store = makeNotesStore({ sql: writer.sql, database: writer.path })
  // Background embeddings live as long as the handlers; shutdown interrupts them (their
  // transaction rolls back, the chunks stay pending for the next repair).
  const background = yield* FiberSet.make()

  const embedLater = (messageId: number, noteId: string) =>
    Effect.gen(function* () {
      const { embedding } = yield* indexing.current
      if (Option.isNone(embedding)) return
      const embedded = yield* embedMessageChunks(writer.sql, messageId, embedding.value)
      if (embedded > 0) yield* Effect.logDebug("note embedded").pipe(Effect.annotateLogs({ note: noteId, embedded }))
    }).pipe(
      Effect.catchAll((e) =>
        Effect.logWarning("note not embedded yet; the daemon's repair will embed it").pipe(
          Effect.annotateLogs({ note: noteId, reason: e.message })
        )
      ),
      FiberSet.run(background)
    )

  return {
    OpenSession: (request: OpenSessionRequest) =>
      store.openSession(request).pipe(
        Effect.tap((session) =>
          Effect.logInfo(session.created ? "session opened" : "session resumed").pipe(
            Effect.annotateLogs({ session: session.session_id })
          )
        ),
        Effect.mapError(toProtocol)
      ),
    LogUpdate: (request: LogUpdateRequest) =>
      Effect.gen(function* () {
        const update = storedUpdate(request)
        const { chunking } = yield* indexing.current
        const chunks = yield* chunkNote(chunking, update.text)
        const logged = yield* store.logUpdate(update, chunks)
        yield* Effect.logInfo(logged.response.created ? "update logged" : "update already logged").pipe(
          Effect.annotateLogs({ note: logged.response.note_id, session: logged.response.session_id })
        )
        // Also on a repeat: a retry after a failed embedding tries again at once.
        yield* embedLater(logged.messageId, logged.response.note_id)
        return logged.response
      }).pipe(Effect.mapError(toProtocol)),
    UpdateNote: (request: UpdateNoteRequest) =>
      Effect.gen(function* () {
        // Chunked as it will be stored (redacted) before the transaction, which only writes.
        const { chunking, embedding } = yield* indexing.current
        const chunks = yield* chunkNote(chunking, redactSecrets(request.text).text)
        const revised = yield* store.updateNote(request, chunks, embedding)
        yield* Effect.logInfo(revised.response.created ? "note revised" : "note revision already stored").pipe(
          Effect.annotateLogs({ note: revised.response.note_id, revision: revised.response.revision })
        )
        yield* embedLater(revised.messageId, revised.response.note_id)
        return revised.response
      }).pipe(Effect.mapError(toProtocol))
  }
})
