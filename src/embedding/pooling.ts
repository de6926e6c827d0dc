/**
 * The numeric parts of inference, kept pure so they are tested without a model: assembling a
 * padded batch and pooling the encoder output.
 */

export interface TokenizedText {
  readonly ids: ReadonlyArray<number>
  readonly typeIds: ReadonlyArray<number>
}

export interface PaddedBatch {
  readonly rows: number
  readonly length: number
  readonly inputIds: BigInt64Array
  readonly attentionMask: BigInt64Array
  readonly typeIds: BigInt64Array
}

/**
 * Pads every row to `padTo` (default: the batch's longest input, never a fixed 512) with
 * `padId`, attention 0 and type 0 — what the Hugging Face tokenizer's right padding produces.
 */
export const padBatch = (texts: ReadonlyArray<TokenizedText>, padId: number, padTo?: number): PaddedBatch => {
  const longest = texts.reduce((m, t) => Math.max(m, t.ids.length), 0)
  const length = Math.max(longest, padTo ?? 0)
  const rows = texts.length
  const inputIds = new BigInt64Array(rows * length).fill(BigInt(padId))
  const attentionMask = new BigInt64Array(rows * length)
  const typeIds = new BigInt64Array(rows * length)
  texts.forEach((t, r) => {
    const base = r * length
    for (let i = 0; i < t.ids.length; i++) {
      inputIds[base + i] = BigInt(t.ids[i] ?? padId)
      attentionMask[base + i] = 1n
      typeIds[base + i] = BigInt(t.typeIds[i] ?? 0)
    }
  })
  return { rows, length, inputIds, attentionMask, typeIds }
}

/** L2 normalisation as FastEmbed does it: the norm in double precision, floored at 1e-12. */
export const l2Normalize = (v: Float32Array): Float32Array => {
  let sum = 0
  for (const x of v) sum += x * x
  const norm = Math.max(Math.sqrt(sum), 1e-12)
  return v.map((x) => x / norm)
}

/**
 * CLS pooling: the hidden state of the first token of each row of a `[rows, tokens, hidden]`
 * tensor, L2-normalised.
 */
export const clsPool = (data: Float32Array, rows: number, tokens: number, hidden: number): Array<Float32Array> => {
  const out: Array<Float32Array> = []
  for (let r = 0; r < rows; r++) {
    const start = r * tokens * hidden
    out.push(l2Normalize(data.slice(start, start + hidden)))
  }
  return out
}

/** Cosine similarity of two vectors (dot product when both are unit length). */
export const cosine = (a: Float32Array, b: Float32Array): number => {
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? 0
    const y = b[i] ?? 0
    dot += x * y
    na += x * x
    nb += y * y
  }
  return dot / Math.max(Math.sqrt(na) * Math.sqrt(nb), 1e-12)
}

/**
 * Groups inputs into batches by token length (shortest first, stable), so each batch pads to a
 * length close to its own inputs'. A batch holds at most `batchSize` inputs and, once it has one,
 * at most `maxTokens` padded tokens (rows × its longest input): many short texts share a run,
 * long ones go a few at a time, which bounds the encoder's activations (and so the process's
 * peak memory) whatever the mix. Returns input indices per batch.
 */
export const batchesByLength = (
  lengths: ReadonlyArray<number>,
  batchSize: number,
  maxTokens = Number.POSITIVE_INFINITY
): Array<Array<number>> => {
  const order = lengths.map((_, i) => i).sort((a, b) => (lengths[a] ?? 0) - (lengths[b] ?? 0) || a - b)
  const batches: Array<Array<number>> = []
  let current: Array<number> = []
  for (const index of order) {
    // Sorted ascending: the input being added is the batch's longest.
    const full = current.length >= batchSize || (current.length + 1) * (lengths[index] ?? 0) > maxTokens
    if (current.length > 0 && full) {
      batches.push(current)
      current = []
    }
    current.push(index)
  }
  if (current.length > 0) batches.push(current)
  return batches
}
