import { Context, Effect, Layer } from "effect"
import { type ImportKindOptions, makeImportKind } from "../importer/import-kind.js"
import type { JobKindRegistry } from "../jobs/job-kind.js"
import { JobKinds } from "../jobs/job-kinds.js"
import { makeRedactKind } from "../redaction-job/redact-kind.js"
import { IndexingServices } from "../vectors/import-services.js"
import { makeRepairKind, type RepairOptions } from "../vectors/repair-kind.js"
import { IndexingFactory } from "./indexing-factory.js"
import { WriterDatabase } from "./writer-database.js"

/** Where this daemon's vectors live: in its SQLite file (vector tables, searched by the query workers) or not. */
export class VectorPlacement extends Context.Tag("blctx/VectorPlacement")<
  VectorPlacement,
  { readonly embeddedVectors: boolean }
>() {}

/** The indexing services on the writer connection: chunks and their vectors commit together. */
export const DaemonIndexingLive = Layer.scopedContext(
  Effect.gen(function* () {
    const writer = yield* WriterDatabase
    const { indexing, embeddedVectors } = yield* Effect.flatMap(IndexingFactory, (f) => f.make(writer.sql))
    return Context.make(IndexingServices, indexing).pipe(Context.add(VectorPlacement, { embeddedVectors }))
  })
)

/** How the indexing kinds are built: nothing in the product; tests compose holds here. */
export interface IndexingKindOptions {
  readonly import?: ImportKindOptions
  readonly repair?: RepairOptions
}

/**
 * The daemon's job kinds: the ones it is given plus the kinds built on its indexing services
 * (import, repair, and redact, which brings stored text under newer redaction rules).
 */
export const DaemonJobKindsLive = (options: IndexingKindOptions = {}) =>
  Layer.effect(
    JobKinds,
    Effect.gen(function* () {
      const base = yield* JobKinds
      const indexing = yield* Effect.all([
        makeImportKind(options.import),
        makeRepairKind(options.repair),
        makeRedactKind
      ])
      const all: JobKindRegistry = new Map([...base, ...indexing.map((k) => [k.name, k] as const)])
      return all
    })
  )
