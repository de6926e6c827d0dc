import { Effect, Layer } from "effect"
import { ModelRuntime } from "../src/embedding/model-runtime.js"

/**
 * The ONNX model runtime, loaded on first use: the CLI only needs ONNX Runtime and the
 * tokenizer when the embedding_model step verifies the model, not for every command.
 */
export const OnnxModelRuntimeLazy = Layer.succeed(ModelRuntime, {
  load: (folder, spec) =>
    Effect.flatMap(
      Effect.promise(() => import("./onnx-model-runtime.js")),
      (onnx) => onnx.loadOnnxEmbedder(folder, spec)
    )
})
