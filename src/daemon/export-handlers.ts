import { Effect, FiberSet, Option } from "effect"
import { type ImportedRevision, type ImportNotesRequest, ImportNotesResponse } from "../export/import-contract.js"
import { makeNotesImportStore } from "../export/notes-import-store.js"
import { chunkNote, embedMessageChunks } from "../notes/note-embedding.js"
import { daemonStoreError } from "../rpc/errors.js"
import { IndexingServices } from "../vectors/import-services.js"
import { WriterDatabase } from "./writer-database.js"

/**
 * Export and restore. An export page is a read, answered where every read runs (the query
 * workers). `ImportNotes` writes on the writer connection like `LogUpdate`: the batch's sessions
 * in one transaction, then each note (its new revisions) in one transaction of its own, so a
 * failure never leaves half a note. The current revisions' chunks are embedded after the commit
 * in the background; if that fails they stay pending for the index watcher's repair.
 */
export const makeExportHandlers = Effect.gen(function* () {
  const writer = yield* WriterDatabase
  const indexing = yield* IndexingServices
  const store = makeNotesImportStore({ sql: writer.sql, database: writer.path })
  const background = yield* FiberSet.make()

  const embedLater = (messageId: number, noteId: string) =>
    Effect.gen(function* () {
      const { embedding } = yield* indexing.current
      if (Option.isNone(embedding)) return
      yield* embedMessageChunks(writer.sql, messageId, embedding.value)
    }).pipe(
      Effect.catchAll((e) =>
        Effect.logWarning("restored note not embedded yet; the daemon's repair will embed it").pipe(
          Effect.annotateLogs({ note: noteId, reason: e.message })
        )
      ),
      FiberSet.run(background)
    )

  const importNotes = (request: ImportNotesRequest) =>
    Effect.gen(function* () {
      const { chunking, embedding } = yield* indexing.current
      const sessions = yield* store.restoreSessions(request.sessions)
      // Revisions grouped by note, in the order the notes first appear.
      const notes = new Map<string, Array<ImportedRevision>>()
      for (const item of request.revisions) {
        const noteId = item.revision.note_id.toLowerCase()
        const group = notes.get(noteId) ?? []
        group.push(item)
        notes.set(noteId, group)
      }
      let notesImported = 0
      let revisionsImported = 0
      let alreadyPresent = 0
      let forgotten = 0
      const problems: Array<ImportNotesResponse["problems"][number]> = []
      for (const [noteId, revisions] of notes) {
        const restored = yield* store.restoreNote(
          noteId,
          revisions,
          sessions.mapped,
          (text) => chunkNote(chunking, text),
          embedding
        )
        if (restored.imported > 0) notesImported++
        revisionsImported += restored.imported
        alreadyPresent += restored.alreadyPresent
        forgotten += restored.forgotten
        problems.push(...restored.problems)
        if (restored.chunkedMessage !== null) yield* embedLater(restored.chunkedMessage, noteId)
      }
      yield* Effect.logInfo("notes restored").pipe(
        Effect.annotateLogs({ notes: notesImported, revisions: revisionsImported, problems: problems.length })
      )
      return new ImportNotesResponse({
        notes_imported: notesImported,
        revisions_imported: revisionsImported,
        already_present: alreadyPresent,
        forgotten,
        sessions_created: sessions.created,
        sessions_mapped: sessions.byBinding,
        problems
      })
    }).pipe(Effect.mapError(daemonStoreError))

  return {
    ImportNotes: importNotes
  }
})
