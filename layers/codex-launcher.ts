import * as NodePath from "node:path"
import { Command } from "@effect/platform"
import { Config, Effect, Option } from "effect"
import { OWN_CALL_VARIABLE } from "../src/capture/hook-command.js"
import { CodexNotFound } from "../src/codex/codex-cli.js"
import { Paths } from "../src/paths/paths.js"
import { findOnPath } from "./agent-executable.js"

export { findOnPath }

/**
 * How blctx starts the codex found on PATH for one Codex home, shared by every layer that runs
 * codex (the CLI commands, the app server). CODEX_HOME is set to the home named, except Codex's
 * own default (`$HOME/.codex`), where it is left out so Codex creates that folder itself when it
 * is missing, as it does for a person; a CODEX_HOME naming a missing folder is refused by Codex.
 */
export const makeCodexLauncher = Effect.gen(function* () {
  const paths = yield* Paths
  const pathVariable = yield* Config.string("PATH").pipe(Config.withDefault(""))
  const defaultHome = NodePath.join(paths.home, ".codex")

  /** The codex executable on PATH. */
  const locate = Effect.suspend(() => {
    const { found, searched } = findOnPath(pathVariable, "codex")
    return Option.match(found, {
      onNone: () => Effect.fail(new CodexNotFound({ searched })),
      onSome: Effect.succeed
    })
  })

  /** Hooks this codex fires see OWN_CALL_VARIABLE and capture nothing (src/capture/hook-command.ts). */
  const environment = (codexHome: string) => {
    const own = { [OWN_CALL_VARIABLE]: "1" }
    if (NodePath.resolve(codexHome) !== defaultHome) {
      return { env: { CODEX_HOME: codexHome, ...own }, extendEnv: true }
    }
    // Codex finds its default home through HOME: the same HOME blctx resolved it from.
    const { CODEX_HOME: _unset, ...rest } = process.env
    return { env: { ...rest, HOME: paths.home, ...own }, extendEnv: false }
  }

  /** `codex ARGS...` for the Codex home, not started yet. */
  const command = (codexHome: string, args: ReadonlyArray<string>) =>
    Effect.map(locate, (executable) => {
      const { env, extendEnv } = environment(codexHome)
      return Command.make(executable, ...args).pipe(
        Command.env(env, { extendEnv }),
        // Codex layers a project's .codex/config.toml over the global one from the working
        // directory; blctx reads and writes the global configuration only.
        Command.workingDirectory("/")
      )
    })

  return { locate, command } as const
})
