import { createHash } from "node:crypto"
import { Schema } from "effect"
import type { ModelSpec } from "../domain/model-spec.js"

/**
 * What a stored vector was made with: model, revision, file hashes, dimension, pooling and
 * prefix policy. Vectors with different fingerprints are never mixed in one collection.
 * `key` (16 hex digits of a SHA-256 over the canonical fields) names tables, collections and
 * the model folder.
 */
export class ModelFingerprint extends Schema.Class<ModelFingerprint>("ModelFingerprint")({
  key: Schema.String.pipe(Schema.pattern(/^[0-9a-f]{16}$/)),
  model: Schema.String,
  revision: Schema.String,
  dims: Schema.Int,
  pooling: Schema.String,
  normalize: Schema.String,
  prefixes: Schema.Struct({ query: Schema.String, passage: Schema.String }),
  files: Schema.Array(Schema.Struct({ name: Schema.String, sha256: Schema.String }))
}) {
  /** A short human-readable label, e.g. `Qdrant/bge-small-en@8791246cc2a7#0123456789abcdef`. */
  get label(): string {
    return `${this.model}@${this.revision.slice(0, 12)}#${this.key}`
  }
}

/** The fingerprint of a spec. The endpoint is not part of it: a mirror serves the same bytes. */
export const fingerprintOf = (spec: ModelSpec): ModelFingerprint => {
  // Code-unit order, never locale order: the key must be the same on every machine.
  const files = [...spec.files]
    .map((f) => ({ name: f.name, sha256: f.sha256 }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const canonical = {
    model: spec.repo,
    revision: spec.revision,
    dims: spec.dims,
    pooling: spec.pooling,
    normalize: spec.normalize,
    prefixes: { query: spec.prefixes.query, passage: spec.prefixes.passage },
    files
  }
  const key = createHash("sha256").update(JSON.stringify(canonical)).digest("hex").slice(0, 16)
  return new ModelFingerprint({ key, ...canonical })
}
