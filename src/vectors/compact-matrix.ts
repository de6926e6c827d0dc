import { INT8_DOT_WASM } from "./int8-dot-wasm.js"

/**
 * Compact vectors: each vector, scaled to unit length, as int8 codes with one scale
 * (`max |x| / 127`), a quarter of its float32 size, so a first pass over every vector reads 384
 * bytes per chunk. `scale_v * scale_q * dot(codes_v, codes_q)` approximates the cosine of the
 * two vectors and picks candidates; the caller rescores them with the exact float vectors.
 */
export interface Int8Code {
  readonly codes: Int8Array
  readonly scale: number
}

export const quantize = (vector: Float32Array): Int8Code => {
  let max = 0
  let squares = 0
  for (const x of vector) {
    max = Math.max(max, Math.abs(x))
    squares += x * x
  }
  const codes = new Int8Array(vector.length)
  const norm = Math.sqrt(squares)
  if (max === 0 || !Number.isFinite(max) || !Number.isFinite(norm)) return { codes, scale: 0 }
  const scale = max / norm / 127
  for (let i = 0; i < vector.length; i++) codes[i] = Math.round((vector[i] ?? 0) / norm / scale)
  return { codes, scale }
}

/** Rows are padded with zeros to this many lanes, the SIMD width of the kernel. */
const LANES = 16
const PAGE = 65536

interface Kernel {
  readonly memory: WebAssembly.Memory
  readonly dotRows: (m: number, q: number, n: number, stride: number, out: number) => void
}

let compiled: WebAssembly.Module | undefined
const instantiate = (): Kernel => {
  compiled ??= new WebAssembly.Module(Buffer.from(INT8_DOT_WASM, "base64"))
  const exports = new WebAssembly.Instance(compiled, {}).exports as {
    memory: WebAssembly.Memory
    dot_rows: Kernel["dotRows"]
  }
  return { memory: exports.memory, dotRows: exports.dot_rows }
}

/**
 * An in-memory matrix of int8 codes keyed by chunk id, in WebAssembly memory: rows
 * `[0, rows)` hold the codes, the space after them is scratch for a query and its scores.
 * Rows are added or replaced in place; a removed row gets scale 0 (never a candidate) and is
 * reused by the next row added.
 */
export class CompactMatrix {
  readonly stride: number
  private kernel = instantiate()
  private ids: Array<number> = []
  private scales = new Float32Array(1024)
  private readonly rowOf = new Map<number, number>()
  private readonly free: Array<number> = []

  constructor(readonly dims: number) {
    this.stride = Math.ceil(dims / LANES) * LANES
  }

  /** How many ids have a row. */
  get size(): number {
    return this.rowOf.size
  }

  /** Adds the row of `id`, or replaces it when present. */
  set(id: number, code: Int8Code): void {
    let row = this.rowOf.get(id) ?? this.free.pop()
    if (row === undefined) {
      row = this.ids.length
      this.reserve(row + 1)
      this.ids.push(id)
    }
    this.ids[row] = id
    this.rowOf.set(id, row)
    const view = new Int8Array(this.kernel.memory.buffer, row * this.stride, this.stride)
    view.fill(0)
    view.set(code.codes.subarray(0, this.dims))
    this.scales[row] = code.scale
  }

  has(id: number): boolean {
    return this.rowOf.has(id)
  }

  delete(id: number): void {
    const row = this.rowOf.get(id)
    if (row === undefined) return
    this.rowOf.delete(id)
    this.scales[row] = 0
    this.free.push(row)
  }

  /**
   * The ids of the `n` rows of highest approximate score for `query`, best first (fewer when
   * the matrix is smaller). Rows of scale 0 (zero vectors) are never candidates.
   */
  candidates(query: Float32Array, n: number): Array<number> {
    const size = this.ids.length
    if (this.rowOf.size === 0 || n <= 0) return []
    const q = quantize(query)
    const queryAt = align(size * this.stride)
    const scoresAt = align(queryAt + this.stride)
    this.ensureBytes(scoresAt + size * 4)
    const memory = this.kernel.memory.buffer
    const queryView = new Int8Array(memory, queryAt, this.stride)
    queryView.fill(0)
    queryView.set(q.codes.subarray(0, this.dims))
    this.kernel.dotRows(0, queryAt, size, this.stride, scoresAt)
    const dots = new Int32Array(this.kernel.memory.buffer, scoresAt, size)
    return topRows(dots, this.scales, Math.min(n, size)).map((row) => this.ids[row] ?? -1)
  }

  private reserve(rows: number) {
    if (rows > this.scales.length) {
      const grown = new Float32Array(Math.max(rows, this.scales.length * 2))
      grown.set(this.scales)
      this.scales = grown
    }
    this.ensureBytes(rows * this.stride)
  }

  private ensureBytes(bytes: number) {
    const have = this.kernel.memory.buffer.byteLength
    if (bytes > have) this.kernel.memory.grow(Math.ceil((bytes - have) / PAGE))
  }
}

const align = (offset: number) => Math.ceil(offset / LANES) * LANES

/**
 * The rows of the `n` largest `dots[i] * scales[i]`, best first: a bounded min-heap, so a pass
 * over 100k rows keeps at most `n` entries.
 */
const topRows = (dots: Int32Array, scales: Float32Array, n: number): Array<number> => {
  const heapRows = new Int32Array(n)
  const heapScores = new Float64Array(n)
  let filled = 0
  const siftDown = (start: number) => {
    let i = start
    for (;;) {
      const l = 2 * i + 1
      const r = l + 1
      let smallest = i
      if (l < filled && (heapScores[l] ?? 0) < (heapScores[smallest] ?? 0)) smallest = l
      if (r < filled && (heapScores[r] ?? 0) < (heapScores[smallest] ?? 0)) smallest = r
      if (smallest === i) return
      swap(heapRows, heapScores, i, smallest)
      i = smallest
    }
  }
  for (let row = 0; row < dots.length; row++) {
    const scale = scales[row] ?? 0
    if (scale === 0) continue
    const score = (dots[row] ?? 0) * scale
    if (filled < n) {
      let i = filled++
      heapRows[i] = row
      heapScores[i] = score
      while (i > 0) {
        const parent = (i - 1) >> 1
        if ((heapScores[parent] ?? 0) <= (heapScores[i] ?? 0)) break
        swap(heapRows, heapScores, i, parent)
        i = parent
      }
    } else if (score > (heapScores[0] ?? 0)) {
      heapRows[0] = row
      heapScores[0] = score
      siftDown(0)
    }
  }
  const order = Array.from({ length: filled }, (_, i) => i).sort(
    (a, b) => (heapScores[b] ?? 0) - (heapScores[a] ?? 0) || (heapRows[a] ?? 0) - (heapRows[b] ?? 0)
  )
  return order.map((i) => heapRows[i] ?? 0)
}

const swap = (rows: Int32Array, scores: Float64Array, a: number, b: number) => {
  const r = rows[a] ?? 0
  rows[a] = rows[b] ?? 0
  rows[b] = r
  const s = scores[a] ?? 0
  scores[a] = scores[b] ?? 0
  scores[b] = s
}
