import { Schema } from "effect"

/** A file of the model folder, pinned by size and SHA-256. */
export class ModelFile extends Schema.Class<ModelFile>("ModelFile")({
  name: Schema.String.pipe(
    Schema.pattern(/^[A-Za-z0-9._-]+$/, { message: () => "must be a plain file name (letters, digits, . _ -)" }),
    Schema.filter((n) => n !== "." && n !== "..", { message: () => "must be a plain file name" })
  ),
  size: Schema.Int.pipe(Schema.nonNegative()),
  sha256: Schema.String.pipe(Schema.pattern(/^[0-9a-f]{64}$/, { message: () => "must be 64 lowercase hex digits" }))
}) {}

/** The text prepended to a query or a passage before it is embedded. Part of the fingerprint. */
export const PrefixPolicy = Schema.Struct({
  query: Schema.String,
  passage: Schema.String
})
export type PrefixPolicy = typeof PrefixPolicy.Type

/**
 * The offline ranked-retrieval check run after installation: `query` is embedded as a query,
 * `passages` as passages, and the passage at `expected_first` must rank first by cosine
 * similarity. For a real model this is a small semantic test; a test model with random weights
 * states an identity check instead (the same text as query and passage, with empty prefixes),
 * which proves the pipeline is consistent but says nothing about quality.
 */
export const SanityCheck = Schema.Struct({
  query: Schema.String,
  passages: Schema.NonEmptyArray(Schema.String),
  expected_first: Schema.Int.pipe(Schema.nonNegative())
}).pipe(
  Schema.filter((s) => s.expected_first < s.passages.length, {
    message: () => "expected_first must index one of the passages"
  })
)
export type SanityCheck = typeof SanityCheck.Type

/**
 * Everything that identifies an embedding model and how blctx uses it. The files are fetched
 * from `<endpoint>/<repo>/resolve/<revision>/<name>` (the Hugging Face layout).
 */
export class ModelSpec extends Schema.Class<ModelSpec>("ModelSpec")({
  endpoint: Schema.String.pipe(
    Schema.pattern(/^https?:\/\/[^\s]+$/, { message: () => "must be an http:// or https:// URL" })
  ),
  repo: Schema.String.pipe(
    Schema.pattern(/^[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+$/, { message: () => "must look like owner/name" })
  ),
  revision: Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9._-]+$/, { message: () => "must be a commit or tag" })),
  dims: Schema.Int.pipe(Schema.positive()),
  /** The ONNX graph inside the folder; the other files are the tokenizer and its configuration. */
  onnx_file: Schema.String,
  files: Schema.NonEmptyArray(ModelFile),
  pooling: Schema.Literal("cls"),
  normalize: Schema.Literal("l2"),
  max_tokens: Schema.Int.pipe(Schema.positive()),
  prefixes: PrefixPolicy,
  sanity: SanityCheck
}) {}

export const BGE_SMALL_EN_REVISION = "8791246cc2a79c7949a4dc0d4a018cbd7d024879"

/**
 * The default: BAAI/bge-small-en in its FastEmbed packaging (`Qdrant/bge-small-en`), pinned.
 * The prefixes are FastEmbed's (`queryEmbed` / `passageEmbed`), so vectors are interchangeable.
 */
export const DEFAULT_MODEL_SPEC = new ModelSpec({
  endpoint: "https://huggingface.co",
  repo: "Qdrant/bge-small-en",
  revision: BGE_SMALL_EN_REVISION,
  dims: 384,
  onnx_file: "model_optimized.onnx",
  files: [
    new ModelFile({
      name: "model_optimized.onnx",
      size: 132883455,
      sha256: "904dc556aacd699d056bcb46dec7535551ac876da69814baf0edc8fa0d184f4f"
    }),
    new ModelFile({
      name: "config.json",
      size: 701,
      sha256: "986feac5770b8861638179141c04a1535fa65f568d5f194b7c8a51145b5a6412"
    }),
    new ModelFile({
      name: "special_tokens_map.json",
      size: 125,
      sha256: "b6d346be366a7d1d48332dbc9fdf3bf8960b5d879522b7799ddba59e76237ee3"
    }),
    new ModelFile({
      name: "tokenizer.json",
      size: 711396,
      sha256: "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66"
    }),
    new ModelFile({
      name: "tokenizer_config.json",
      size: 366,
      sha256: "9261e7d79b44c8195c1cada2b453e55b00aeb81e907a6664974b4d7776172ab3"
    }),
    new ModelFile({
      name: "vocab.txt",
      size: 231508,
      sha256: "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"
    })
  ],
  pooling: "cls",
  normalize: "l2",
  max_tokens: 512,
  prefixes: { query: "query: ", passage: "passage: " },
  sanity: {
    query: "how do I undo my last git commit",
    passages: [
      "The Eiffel Tower is a wrought-iron lattice tower in Paris.",
      "To undo the most recent commit but keep the changes, run git reset --soft HEAD~1.",
      "Bananas are a good source of potassium."
    ],
    expected_first: 1
  }
})

/** Where a file of the spec is served: the Hugging Face `resolve` layout, so a mirror only changes `endpoint`. */
export const modelFileUrl = (spec: ModelSpec, name: string): string =>
  `${spec.endpoint.replace(/\/+$/, "")}/${spec.repo}/resolve/${spec.revision}/${encodeURIComponent(name)}`

/** The text actually embedded for `kind`, following the spec's prefix policy. */
export const withPrefix = (spec: ModelSpec, kind: "query" | "passage", text: string): string =>
  `${kind === "query" ? spec.prefixes.query : spec.prefixes.passage}${text}`
