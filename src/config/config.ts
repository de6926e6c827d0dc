import { Data, Either, ParseResult, Schema } from "effect"
import { PROMPT_RECALL_BOUNDS } from "../capture/prompt-recall-settings.js"
import { DEFAULT_MODEL_SPEC, ModelFile, ModelSpec, PrefixPolicy, SanityCheck } from "../domain/model-spec.js"

/**
 * The embedded default: vectors in tables of the daemon's own SQLite database. "sqlite-vec" is
 * the name blctx 0.1 gave it (when vectors lived in sqlite-vec tables) and still means the same.
 */
export const SqliteStore = Schema.Struct({ kind: Schema.Literal("sqlite", "sqlite-vec") })

/** A Qdrant server; the API key is read from the named environment variable, never from the file. */
export const QdrantStore = Schema.Struct({
  kind: Schema.Literal("qdrant"),
  url: Schema.String.pipe(
    Schema.pattern(/^https?:\/\/[^\s]+$/, { message: () => "must be an http:// or https:// URL" })
  ),
  api_key_env: Schema.optional(
    Schema.String.pipe(
      Schema.pattern(/^[A-Za-z_][A-Za-z0-9_]*$/, { message: () => "must be an environment variable name" })
    )
  )
})

export const VectorStoreConfig = Schema.Union(SqliteStore, QdrantStore)
export type VectorStoreConfig = typeof VectorStoreConfig.Type

/** A partial model spec: every key is optional and falls back to the pinned default. */
export const ModelOverride = Schema.Struct({
  endpoint: Schema.optional(ModelSpec.fields.endpoint),
  repo: Schema.optional(ModelSpec.fields.repo),
  revision: Schema.optional(ModelSpec.fields.revision),
  dims: Schema.optional(ModelSpec.fields.dims),
  onnx_file: Schema.optional(Schema.String),
  files: Schema.optional(Schema.NonEmptyArray(ModelFile)),
  max_tokens: Schema.optional(ModelSpec.fields.max_tokens),
  prefixes: Schema.optional(PrefixPolicy),
  sanity: Schema.optional(SanityCheck)
})

const boundedInt = ({ min, max }: { readonly min: number; readonly max: number }) =>
  Schema.Int.pipe(Schema.between(min, max, { message: () => `must be an integer from ${min} to ${max}` }))

/**
 * Prompt-time recall by the UserPromptSubmit hook; every key optional, defaults and bounds in
 * src/capture/prompt-recall-settings.ts (the hook reads this section itself, without effect).
 */
export const PromptRecallConfig = Schema.Struct({
  enabled: Schema.optional(Schema.Boolean),
  deadline_ms: Schema.optional(boundedInt(PROMPT_RECALL_BOUNDS.deadline_ms)),
  limit: Schema.optional(boundedInt(PROMPT_RECALL_BOUNDS.limit)),
  min_relevance: Schema.optional(
    Schema.Number.pipe(
      Schema.between(PROMPT_RECALL_BOUNDS.min_relevance.min, PROMPT_RECALL_BOUNDS.min_relevance.max, {
        message: () => "must be a number from 0 to 1"
      })
    )
  )
})

/** `<XDG_CONFIG_HOME>/blctx/config.json`. Every key is optional; unknown keys are refused. */
export const ConfigFileSchema = Schema.Struct({
  model: Schema.optional(ModelOverride),
  vector_store: Schema.optional(VectorStoreConfig),
  prompt_recall: Schema.optional(PromptRecallConfig)
})

/** The configuration in force: the model spec (defaults merged with overrides) and the vector store. */
export interface BlctxConfig {
  readonly model: ModelSpec
  /** The `model` keys config.json sets (e.g. `endpoint` for a mirror); the rest are the defaults. */
  readonly modelOverrides: ReadonlyArray<keyof typeof ModelOverride.Type>
  readonly vectorStore: VectorStoreConfig
  /** Where it came from: the file path, or "defaults" when there is no file. */
  readonly source: string
}

/** config.json is not valid; names the file and the field so a person can fix it. */
export class ConfigError extends Data.TaggedError("ConfigError")<{
  readonly path: string
  readonly field: string
  readonly message: string
}> {
  get remediation(): string {
    return `Fix ${this.field === "" ? "the file" : `"${this.field}"`} in ${this.path} (or move the file aside to use the defaults).`
  }
}

export const DEFAULT_CONFIG: Omit<BlctxConfig, "source"> = {
  model: DEFAULT_MODEL_SPEC,
  modelOverrides: [],
  vectorStore: { kind: "sqlite" }
}

const decode = Schema.decodeUnknownEither(ConfigFileSchema, { onExcessProperty: "error", errors: "first" })

const fieldOf = (error: ParseResult.ParseError): { field: string; message: string } => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  const first = issues[0]
  if (first === undefined) return { field: "", message: "invalid configuration" }
  return { field: first.path.map(String).join("."), message: first.message }
}

/**
 * V8's JSON errors may quote the text around the error (`..."endpoint":https://u:s3"...`), which
 * can be part of a password in an endpoint URL: the quote is dropped, never printed.
 */
const withoutExcerpt = (message: string) => message.replace(/, (?:\.\.\.)?"[\s\S]*"(?:\.\.\.)? is not valid JSON$/, "")

/** Parses config.json text; the defaults fill every missing key. Pure, so every rule is unit-tested. */
export const parseConfig = (text: string, path: string): Either.Either<BlctxConfig, ConfigError> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return Either.left(
      new ConfigError({
        path,
        field: "",
        message: `not valid JSON: ${withoutExcerpt(error instanceof Error ? error.message : String(error))}`
      })
    )
  }
  const decoded = decode(json)
  if (Either.isLeft(decoded)) {
    const { field, message } = fieldOf(decoded.left)
    return Either.left(new ConfigError({ path, field, message }))
  }
  const file = decoded.right
  const override = file.model ?? {}
  const d = DEFAULT_MODEL_SPEC
  const model = new ModelSpec({
    endpoint: override.endpoint ?? d.endpoint,
    repo: override.repo ?? d.repo,
    revision: override.revision ?? d.revision,
    dims: override.dims ?? d.dims,
    onnx_file: override.onnx_file ?? d.onnx_file,
    files: override.files ?? d.files,
    pooling: d.pooling,
    normalize: d.normalize,
    max_tokens: override.max_tokens ?? d.max_tokens,
    prefixes: override.prefixes ?? d.prefixes,
    sanity: override.sanity ?? d.sanity
  })
  if (!model.files.some((f) => f.name === model.onnx_file)) {
    return Either.left(
      new ConfigError({
        path,
        field: override.onnx_file === undefined ? "model.files" : "model.onnx_file",
        message: `the ONNX file "${model.onnx_file}" is not one of the model files`
      })
    )
  }
  const names = model.files.map((f) => f.name)
  const duplicate = names.find((n, i) => names.indexOf(n) !== i)
  if (duplicate !== undefined) {
    return Either.left(new ConfigError({ path, field: "model.files", message: `"${duplicate}" is listed twice` }))
  }
  const modelOverrides = (Object.keys(override) as Array<keyof typeof override>).filter(
    (k) => override[k] !== undefined
  )
  return Either.right({
    model,
    modelOverrides,
    vectorStore: file.vector_store ?? DEFAULT_CONFIG.vectorStore,
    source: path
  })
}
