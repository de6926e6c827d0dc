import * as NodePath from "node:path"
import type { ModelSpec } from "../domain/model-spec.js"
import { fingerprintOf } from "./fingerprint.js"

/** Where models live inside the cache directory. */
export const modelsRoot = (cacheDir: string) => NodePath.join(cacheDir, "models")

const folderName = (spec: ModelSpec) => `${spec.repo.replace("/", "--")}--${fingerprintOf(spec).key}`

/** The active (verified, renamed into place) model folder of a spec. */
export const activeModelFolder = (cacheDir: string, spec: ModelSpec) =>
  NodePath.join(modelsRoot(cacheDir), folderName(spec))

/** Where a spec's files are downloaded (`<name>.part`, then `<name>`) before the folder is activated. */
export const stagingModelFolder = (cacheDir: string, spec: ModelSpec) =>
  NodePath.join(modelsRoot(cacheDir), `.staging-${folderName(spec)}`)

export const partFileName = (name: string) => `${name}.part`
