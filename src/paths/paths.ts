import * as NodePath from "node:path"
import { Config, Effect, Layer, Option } from "effect"
import { PATH_VARIABLES, type PathInputs, resolvePaths } from "./resolve-paths.js"

export { APP_DIR, type PathInputs, type ResolvedPaths, resolvePaths } from "./resolve-paths.js"

const optionalEnv = (name: string) => Config.option(Config.string(name)).pipe(Config.map(Option.getOrUndefined))

/** The paths of this process, read once from its environment. */
export class Paths extends Effect.Service<Paths>()("blctx/Paths", {
  effect: Effect.gen(function* () {
    const home = yield* Config.string("HOME").pipe(
      Config.validate({ message: "it must be an absolute path", validation: (h) => NodePath.isAbsolute(h) })
    )
    const variables = yield* Effect.forEach(PATH_VARIABLES, (name) =>
      Effect.map(optionalEnv(name), (value) => [name, value] as const)
    )
    return resolvePaths({ home, ...Object.fromEntries(variables) })
  })
}) {
  /** A Paths layer from explicit inputs (tests, and the daemon which takes its roots as arguments). */
  static layerFrom = (input: PathInputs) => Layer.succeed(Paths, Paths.make(resolvePaths(input)))
}
