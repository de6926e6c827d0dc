import { Context, Data, Effect, Schema } from "effect"
import type { ModelFingerprint } from "../embedding/fingerprint.js"

/** A chunk's id: the integer primary key of its row in SQLite (the truth the index is rebuilt from). */
export const ChunkId = Schema.Int.pipe(Schema.nonNegative(), Schema.brand("ChunkId"))
export type ChunkId = typeof ChunkId.Type

export interface VectorPoint {
  readonly id: ChunkId
  readonly vector: Float32Array
}

/** A nearest neighbour: `score` is the cosine similarity (1 = same direction). */
export interface VectorHit {
  readonly id: ChunkId
  readonly score: number
}

/** The vector store failed or refused; names the store (file or URL) and what to do. */
export class VectorIndexError extends Data.TaggedError("VectorIndexError")<{
  readonly store: string
  readonly message: string
  readonly remediation: string
}> {}

/**
 * Vectors keyed by chunk id, one collection per model fingerprint, so vectors of two
 * fingerprints never mix. Every method names the fingerprint it works on; a collection is
 * created on first write. Exact or approximate is the layer's business; scores are cosine.
 */
export interface VectorIndexShape {
  /** Inserts or replaces the vectors of these chunks. Every vector must have `fingerprint.dims` floats. */
  readonly upsert: (
    fingerprint: ModelFingerprint,
    points: ReadonlyArray<VectorPoint>
  ) => Effect.Effect<void, VectorIndexError>
  /** Removes these chunks' vectors; ids that are not there are ignored. */
  readonly remove: (fingerprint: ModelFingerprint, ids: ReadonlyArray<ChunkId>) => Effect.Effect<void, VectorIndexError>
  /** The `k` nearest vectors by cosine similarity, best first. */
  readonly search: (
    fingerprint: ModelFingerprint,
    query: Float32Array,
    k: number
  ) => Effect.Effect<ReadonlyArray<VectorHit>, VectorIndexError>
  readonly count: (fingerprint: ModelFingerprint) => Effect.Effect<number, VectorIndexError>
  /** Every chunk id that has a vector for this fingerprint, ascending (repair compares it with SQLite). */
  readonly listIds: (fingerprint: ModelFingerprint) => Effect.Effect<ReadonlyArray<ChunkId>, VectorIndexError>
  /** Keys of the fingerprints that have a collection (repair prunes the ones no longer in use). */
  readonly fingerprints: () => Effect.Effect<ReadonlyArray<string>, VectorIndexError>
}

export class VectorIndex extends Context.Tag("blctx/VectorIndex")<VectorIndex, VectorIndexShape>() {}

/** Refuses a vector of the wrong length before it reaches a store. */
export const checkDims = (
  store: string,
  fingerprint: ModelFingerprint,
  vector: Float32Array
): VectorIndexError | undefined =>
  vector.length === fingerprint.dims
    ? undefined
    : new VectorIndexError({
        store,
        message: `vector has ${vector.length} dimensions; fingerprint ${fingerprint.label} has ${fingerprint.dims}`,
        remediation: "This is a bug in blctx: vectors must come from the model of their fingerprint."
      })

/**
 * The points of an upsert, each checked against the fingerprint's dims (a vector of the wrong
 * length is refused before it reaches a store), with the last vector given for an id winning.
 */
export const latestPoints = (
  store: string,
  fingerprint: ModelFingerprint,
  points: ReadonlyArray<VectorPoint>
): Effect.Effect<ReadonlyArray<VectorPoint>, VectorIndexError> => {
  for (const p of points) {
    const bad = checkDims(store, fingerprint, p.vector)
    if (bad !== undefined) return Effect.fail(bad)
  }
  return Effect.succeed([...new Map(points.map((p) => [p.id, p])).values()])
}
