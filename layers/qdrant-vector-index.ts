import { QdrantClient } from "@qdrant/js-client-rest"
import { Effect, Schema } from "effect"
import type { ModelFingerprint } from "../src/embedding/fingerprint.js"
import {
  ChunkId,
  checkDims,
  latestPoints,
  VectorIndex,
  VectorIndexError,
  type VectorIndexShape,
  type VectorPoint
} from "../src/vectors/vector-index.js"

export interface QdrantOptions {
  readonly url: string
  readonly apiKey?: string | undefined
  /** Collections are named after the installation, so installations sharing a server never mix. */
  readonly installationId: string
}

/** `blctx-<installation id>-<fingerprint key>`: one collection per installation and fingerprint. */
export const collectionName = (installationId: string, fingerprint: ModelFingerprint) =>
  `${collectionPrefix(installationId)}${fingerprint.key}`
const collectionPrefix = (installationId: string) => `blctx-${installationId}-`

const UPSERT_BATCH = 256
const SCROLL_PAGE = 1000

// Qdrant's answers are decoded, not trusted: only integer point ids are ours.
const Hits = Schema.Array(Schema.Struct({ id: ChunkId, score: Schema.Number }))
const ScrollPage = Schema.Struct({
  points: Schema.Array(Schema.Struct({ id: ChunkId })),
  next_page_offset: Schema.optional(Schema.NullOr(Schema.Unknown))
})
const Collections = Schema.Struct({ collections: Schema.Array(Schema.Struct({ name: Schema.String })) })
const Count = Schema.Struct({ count: Schema.Int })

/** The Qdrant vector index (`@qdrant/js-client-rest`), for a server of your own or a shared cluster. */
export const makeQdrantIndex = (options: QdrantOptions) =>
  Effect.sync(() => {
    const client = new QdrantClient({
      url: options.url,
      ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
      checkCompatibility: false
    })
    const store = options.url
    const call = <A>(what: string, f: () => Promise<A>) =>
      Effect.tryPromise({
        try: f,
        catch: (error) =>
          new VectorIndexError({
            store,
            message: `${what}: ${error instanceof Error ? error.message : String(error)}`,
            remediation: `Check that Qdrant answers at ${options.url} and that the API key variable is set.`
          })
      })
    const decode =
      <A, I>(what: string, schema: Schema.Schema<A, I>) =>
      (value: unknown) =>
        Schema.decodeUnknown(schema)(value).pipe(
          Effect.mapError(
            (error) =>
              new VectorIndexError({
                store,
                message: `${what}: unexpected answer from Qdrant: ${error.message}`,
                remediation: "Check that the collection belongs to blctx and the server runs a supported Qdrant."
              })
          )
        )

    const name = (fingerprint: ModelFingerprint) => collectionName(options.installationId, fingerprint)
    const known = new Set<string>()
    const exists = (collection: string) =>
      known.has(collection)
        ? Effect.succeed(true)
        : call("collection check", () => client.collectionExists(collection)).pipe(
            Effect.map((r) => r.exists),
            Effect.tap((found) => {
              if (found) known.add(collection)
            })
          )
    const ensure = (fingerprint: ModelFingerprint) =>
      Effect.gen(function* () {
        const collection = name(fingerprint)
        if (yield* exists(collection)) return collection
        yield* call("create collection", () =>
          client.createCollection(collection, { vectors: { size: fingerprint.dims, distance: "Cosine" } })
        )
        known.add(collection)
        return collection
      })

    const upsert = Effect.fn("QdrantIndex.upsert")(function* (
      fingerprint: ModelFingerprint,
      points: ReadonlyArray<VectorPoint>
    ) {
      const latest = yield* latestPoints(store, fingerprint, points)
      if (latest.length === 0) return
      const collection = yield* ensure(fingerprint)
      for (let i = 0; i < latest.length; i += UPSERT_BATCH) {
        const batch = latest.slice(i, i + UPSERT_BATCH).map((p) => ({ id: p.id, vector: Array.from(p.vector) }))
        yield* call("upsert", () => client.upsert(collection, { wait: true, points: batch }))
      }
    })

    const remove = Effect.fn("QdrantIndex.remove")(function* (
      fingerprint: ModelFingerprint,
      ids: ReadonlyArray<ChunkId>
    ) {
      const collection = name(fingerprint)
      if (ids.length === 0 || !(yield* exists(collection))) return
      yield* call("delete", () => client.delete(collection, { wait: true, points: [...ids] }))
    })

    const search = Effect.fn("QdrantIndex.search")(function* (
      fingerprint: ModelFingerprint,
      query: Float32Array,
      k: number
    ) {
      const bad = checkDims(store, fingerprint, query)
      if (bad !== undefined) return yield* bad
      const collection = name(fingerprint)
      if (k <= 0 || !(yield* exists(collection))) return []
      const answer = yield* call("search", () =>
        client.query(collection, { query: Array.from(query), limit: Math.floor(k), with_payload: false })
      )
      return yield* decode("search", Hits)(answer.points)
    })

    const count = Effect.fn("QdrantIndex.count")(function* (fingerprint: ModelFingerprint) {
      const collection = name(fingerprint)
      if (!(yield* exists(collection))) return 0
      const answer = yield* call("count", () => client.count(collection, { exact: true }))
      return (yield* decode("count", Count)(answer)).count
    })

    const listIds = Effect.fn("QdrantIndex.listIds")(function* (fingerprint: ModelFingerprint) {
      const collection = name(fingerprint)
      if (!(yield* exists(collection))) return []
      const ids: Array<ChunkId> = []
      let offset: unknown
      do {
        const page = yield* call("scroll", () =>
          client.scroll(collection, {
            limit: SCROLL_PAGE,
            with_payload: false,
            with_vector: false,
            ...(offset === undefined || offset === null ? {} : { offset: offset as number })
          })
        ).pipe(Effect.flatMap(decode("scroll", ScrollPage)))
        ids.push(...page.points.map((p) => p.id))
        offset = page.next_page_offset
      } while (offset !== undefined && offset !== null)
      return ids.sort((a, b) => a - b)
    })

    const fingerprints: VectorIndexShape["fingerprints"] = () =>
      call("list collections", () => client.getCollections()).pipe(
        Effect.flatMap(decode("list collections", Collections)),
        Effect.map((r) =>
          r.collections
            .map((c) => c.name)
            .filter((n) => n.startsWith(collectionPrefix(options.installationId)))
            .map((n) => n.slice(collectionPrefix(options.installationId).length))
            .sort()
        )
      )

    return VectorIndex.of({ upsert, remove, search, count, listIds, fingerprints })
  })
