import { seededRandom } from "./seeded-random.js"

/**
 * A cheap stand-in for bge-small-en at its real size (384 dimensions, bge's 30,522-token
 * vocabulary), generated as a real ONNX model at bench time and never committed: a seeded
 * pseudo-random lookup table and a graph that puts the attention-masked mean of the token vectors
 * in every position (position 0, the CLS position blctx pools, included). Texts sharing terms get
 * near vectors, as with real embeddings, at a fraction of a transformer's cost, so a benchmark can
 * index hundreds of thousands of chunks with 384-dimensional vectors.
 *
 * The ONNX protobuf is written by hand (ModelProto → GraphProto → NodeProto / TensorProto /
 * ValueInfoProto): only the few fields this graph needs. Opset 14, IR version 7.
 */

export const STANDIN_VOCAB = 30_522
export const STANDIN_DIMS = 384
export const STANDIN_SEED = 0x5eed

/** The lookup table `[vocab × dims]`: uniform values in [-1, 1), row-major, from the seed. */
export const standinTable = (seed = STANDIN_SEED, vocab = STANDIN_VOCAB, dims = STANDIN_DIMS): Float32Array => {
  const next = seededRandom(seed)
  const table = new Float32Array(vocab * dims)
  for (let i = 0; i < table.length; i++) table[i] = next() * 2 - 1
  return table
}

// --- protobuf wire format -----------------------------------------------------------------------

type Part = Buffer

const varint = (value: number | bigint): Buffer => {
  let v = BigInt(value)
  if (v < 0n) v = BigInt.asUintN(64, v)
  const out: Array<number> = []
  do {
    let byte = Number(v & 0x7fn)
    v >>= 7n
    if (v !== 0n) byte |= 0x80
    out.push(byte)
  } while (v !== 0n)
  return Buffer.from(out)
}

const key = (field: number, wire: 0 | 2) => varint((field << 3) | wire)
const int = (field: number, value: number | bigint): Part => Buffer.concat([key(field, 0), varint(value)])
const bytes = (field: number, payload: Buffer): Part => Buffer.concat([key(field, 2), varint(payload.length), payload])
const str = (field: number, value: string): Part => bytes(field, Buffer.from(value, "utf8"))
const msg = (field: number, parts: ReadonlyArray<Part>): Part => bytes(field, Buffer.concat(parts))

// TensorProto.DataType
const FLOAT = 1
const INT64 = 7

/** TensorProto: dims (1), data_type (2), name (8), raw_data (9, little-endian). */
const tensor = (name: string, dataType: number, dims: ReadonlyArray<number>, raw: Buffer): Array<Part> => [
  ...dims.map((d) => int(1, d)),
  int(2, dataType),
  str(8, name),
  bytes(9, raw)
]

const int64Raw = (values: ReadonlyArray<number>) => {
  const b = Buffer.alloc(values.length * 8)
  values.forEach((v, i) => {
    b.writeBigInt64LE(BigInt(v), i * 8)
  })
  return b
}

/** ValueInfoProto: name (1), type (2) → tensor_type (1) → elem_type (1), shape (2) → dim (1). */
const valueInfo = (name: string, elemType: number, dims: ReadonlyArray<string | number>): Part[] => [
  str(1, name),
  msg(2, [
    msg(1, [
      int(1, elemType),
      msg(
        2,
        dims.map((d) => msg(1, [typeof d === "number" ? int(1, d) : str(2, d)]))
      )
    ])
  ])
]

/** AttributeProto of an integer: name (1), i (3), type (20: INT = 2). */
const intAttribute = (name: string, value: number): Part[] => [str(1, name), int(3, value), int(20, 2)]

/** NodeProto: input (1), output (2), name (3), op_type (4), attribute (5). */
const node = (
  op: string,
  inputs: ReadonlyArray<string>,
  outputs: ReadonlyArray<string>,
  attributes: ReadonlyArray<Part[]> = []
): Part[] => [
  ...inputs.map((i) => str(1, i)),
  ...outputs.map((o) => str(2, o)),
  str(3, `${op}_${outputs[0] ?? ""}`),
  str(4, op),
  ...attributes.map((a) => msg(5, a))
]

/**
 * The stand-in encoder as ONNX bytes. Inputs `input_ids`, `attention_mask`, `token_type_ids`
 * (int64 `[batch, seq]`; the last one unused but fed by blctx); output `last_hidden_state`
 * (float32 `[batch, seq, dims]`), every position holding
 * `Σ_t mask[b,t]·table[ids[b,t]] / max(Σ_t mask[b,t], 1e-9)`. The same seed gives the same bytes.
 */
export const standinModelBytes = (seed = STANDIN_SEED, vocab = STANDIN_VOCAB, dims = STANDIN_DIMS): Buffer => {
  const table = standinTable(seed, vocab, dims)
  const raw = Buffer.from(table.buffer, table.byteOffset, table.byteLength)
  const eps = Buffer.alloc(4)
  eps.writeFloatLE(1e-9)
  const nodes = [
    node("Gather", ["table", "input_ids"], ["tokens"], [intAttribute("axis", 0)]),
    node("Cast", ["attention_mask"], ["mask_f"], [intAttribute("to", FLOAT)]),
    node("Unsqueeze", ["mask_f", "axis_2"], ["mask_3d"]),
    node("Mul", ["tokens", "mask_3d"], ["masked"]),
    node("ReduceSum", ["masked", "axis_1"], ["summed"], [intAttribute("keepdims", 1)]),
    node("ReduceSum", ["mask_3d", "axis_1"], ["count"], [intAttribute("keepdims", 1)]),
    node("Max", ["count", "eps"], ["count_safe"]),
    node("Div", ["summed", "count_safe"], ["mean"]),
    node("Shape", ["tokens"], ["out_shape"]),
    node("Expand", ["mean", "out_shape"], ["last_hidden_state"])
  ]
  const graph = [
    ...nodes.map((n) => msg(1, n)),
    str(2, "blctx-standin-encoder"),
    msg(5, tensor("table", FLOAT, [vocab, dims], raw)),
    msg(5, tensor("axis_1", INT64, [1], int64Raw([1]))),
    msg(5, tensor("axis_2", INT64, [1], int64Raw([2]))),
    msg(5, tensor("eps", FLOAT, [], eps)),
    msg(11, valueInfo("input_ids", INT64, ["batch", "sequence"])),
    msg(11, valueInfo("attention_mask", INT64, ["batch", "sequence"])),
    msg(11, valueInfo("token_type_ids", INT64, ["batch", "sequence"])),
    msg(12, valueInfo("last_hidden_state", FLOAT, ["batch", "sequence", dims]))
  ]
  return Buffer.concat([
    int(1, 7), // ir_version
    str(2, "blctx-bench"), // producer_name
    msg(7, graph),
    msg(8, [str(1, ""), int(2, 14)]) // opset_import: default domain, opset 14
  ])
}
