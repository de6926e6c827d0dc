import { mkdirSync, writeFileSync } from "node:fs"
import * as NodePath from "node:path"
import {
  TEST_MODEL_DATA_ENV,
  TINY_REPO,
  TINY_REVISION,
  tinyModelBytes,
  tinyModelConfig
} from "../../testing/model-test-folder.js"
import { type ModelServer, startModelServer } from "../../testing/model-test-server.js"
import type { IsolatedHome } from "./isolated-home.js"

export type { ModelServer }
export { TEST_MODEL_DATA_ENV }

/** The test model data (tokenizer of bge-small-en + a tiny encoder), when the run provides it. */
export const modelData = (): string | undefined => process.env[TEST_MODEL_DATA_ENV] || undefined

/** Serves the tiny model over loopback HTTP in the Hugging Face layout. */
export const serveTinyModel = (data: string, options: { readonly cutFirst?: ReadonlyArray<string> } = {}) =>
  startModelServer({
    repo: TINY_REPO,
    revision: TINY_REVISION,
    files: tinyModelBytes(data),
    redirect: true,
    ...(options.cutFirst === undefined ? {} : { cutFirst: options.cutFirst })
  })

/** Writes `config.json` into the isolated home's blctx config directory. */
export const writeBlctxConfig = (home: IsolatedHome, config: unknown) => {
  const dir = NodePath.join(home.xdg.config, "blctx")
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  writeFileSync(
    NodePath.join(dir, "config.json"),
    typeof config === "string" ? config : JSON.stringify(config, null, 2)
  )
}

/** Points the isolated home at the tiny model on `server`. */
export const useTinyModel = (home: IsolatedHome, data: string, server: ModelServer) =>
  writeBlctxConfig(home, tinyModelConfig(data, server.endpoint))
