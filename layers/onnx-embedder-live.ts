import { Effect, Layer } from "effect"
import { Embedder } from "../src/embedding/embedder.js"
import { InstalledModel } from "../src/embedding/installed-model.js"
import { OnnxModelRuntimeLive } from "./onnx-model-runtime.js"

/**
 * The daemon's embedder: the installed model of the configuration on ONNX Runtime, open for the
 * life of the layer. Fails with `ModelNotInstalled` (never downloads) when its files are not
 * there, and with `ModelNotVerified` when the embedding_model step has not recorded that they
 * passed every check; the caller then indexes lexically and marks vectors pending.
 */
export const EmbedderLive = Layer.scoped(
  Embedder,
  Effect.flatMap(InstalledModel, (model) => model.load())
).pipe(Layer.provide(InstalledModel.Default), Layer.provide(OnnxModelRuntimeLive))
