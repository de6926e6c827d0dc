import { Command, CommandExecutor } from "@effect/platform"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, Layer, Option } from "effect"
import { Launchctl, LaunchctlError, parsePrint } from "../src/service/launchctl.js"
import { runCommand } from "./daemon-process-table.js"

/** launchctl's exit status for "no such process / service" (bootout or print of an unknown label). */
const NOT_LOADED = new Set([3, 113])

/** The real `launchctl` (macOS), each call bounded in time, on the current user's GUI domain. */
export const makeLaunchctl = (executable = "launchctl", uid = process.getuid?.() ?? 0) =>
  Layer.effect(
    Launchctl,
    Effect.gen(function* () {
      const executor = yield* CommandExecutor.CommandExecutor
      const domain = `gui/${uid}`
      const launchctl = (args: ReadonlyArray<string>) =>
        runCommand(Command.make(executable, ...args), "20 seconds").pipe(
          Effect.provideService(CommandExecutor.CommandExecutor, executor)
        )
      const failed = (args: ReadonlyArray<string>, r: { readonly code: number; readonly stderr: string }) =>
        new LaunchctlError({
          command: `launchctl ${args.join(" ")}`,
          detail: r.stderr.trim().split("\n")[0] || `exit status ${r.code}`
        })
      const run = (args: ReadonlyArray<string>) =>
        Effect.flatMap(launchctl(args), (r) => (r.code === 0 ? Effect.succeed(r.stdout) : Effect.fail(failed(args, r))))
      return Launchctl.of({
        domain,
        bootstrap: (plistPath) => Effect.asVoid(run(["bootstrap", domain, plistPath])),
        bootout: (label) =>
          Effect.flatMap(launchctl(["bootout", `${domain}/${label}`]), (r) =>
            r.code === 0
              ? Effect.succeed(true)
              : NOT_LOADED.has(r.code)
                ? Effect.succeed(false)
                : Effect.fail(failed(["bootout", `${domain}/${label}`], r))
          ),
        kickstart: (label, restart) =>
          Effect.asVoid(run(["kickstart", ...(restart ? ["-k"] : []), `${domain}/${label}`])),
        print: (label) =>
          Effect.flatMap(launchctl(["print", `${domain}/${label}`]), (r) =>
            r.code === 0
              ? Effect.succeed(Option.some(parsePrint(r.stdout)))
              : NOT_LOADED.has(r.code)
                ? Effect.succeed(Option.none())
                : Effect.fail(failed(["print", `${domain}/${label}`], r))
          )
      })
    })
  )

export const LaunchctlLive = makeLaunchctl().pipe(
  Layer.provide(NodeCommandExecutor.layer),
  Layer.provide(NodeFileSystem.layer)
)
