import { Context, Data, type Effect, type Scope } from "effect"
import type { ModelSpec } from "../domain/model-spec.js"
import type { EmbedderShape } from "./embedder.js"

/** A model folder could not be loaded (missing or unreadable file, wrong shape, wrong dimension). */
export class ModelLoadError extends Data.TaggedError("ModelLoadError")<{
  readonly folder: string
  readonly message: string
  readonly remediation: string
}> {}

/**
 * Loads a FastEmbed-style model folder (ONNX graph + tokenizer files) as an embedder for the
 * life of a scope. Never downloads anything: the folder must already be there.
 */
export class ModelRuntime extends Context.Tag("blctx/ModelRuntime")<
  ModelRuntime,
  {
    readonly load: (folder: string, spec: ModelSpec) => Effect.Effect<EmbedderShape, ModelLoadError, Scope.Scope>
  }
>() {}
