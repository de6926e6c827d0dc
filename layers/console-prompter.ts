import * as Readline from "node:readline/promises"
import { Effect, Layer } from "effect"
import { Prompter } from "../src/cli/prompter.js"

/** A plain text question on the terminal: works the same with or without colors. */
export const ConsolePrompterLive = Layer.succeed(Prompter, {
  confirm: (question, defaultYes) =>
    Effect.acquireUseRelease(
      Effect.sync(() => Readline.createInterface({ input: process.stdin, output: process.stderr })),
      (rl) =>
        Effect.promise(() => rl.question(`${question} ${defaultYes ? "[Y/n]" : "[y/N]"} `)).pipe(
          Effect.map((answer) => {
            const a = answer.trim().toLowerCase()
            return a === "" ? defaultYes : a === "y" || a === "yes"
          })
        ),
      (rl) => Effect.sync(() => rl.close())
    )
})
