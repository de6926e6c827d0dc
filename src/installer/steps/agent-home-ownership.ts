import { Effect } from "effect"
import { checkOwnership } from "../../fs/ownership.js"
import { SafeFs } from "../../fs/safe-fs.js"
import { fail, type StepFailure } from "../step.js"

/**
 * The one ownership check for every file blctx writes into an agent's home (skills, hooks files):
 * the file, each folder and each link on the way to it must be this user's (see checkOwnership),
 * so a CODEX_HOME or CLAUDE_CONFIG_DIR that leads into another user's folder is refused the same
 * way by every step. `next` is the command that retries.
 */
export const checkAgentHomePath = (
  fs: SafeFs["Type"],
  path: string,
  agent: string,
  next: string
): Effect.Effect<void, StepFailure> =>
  checkOwnership(path).pipe(
    Effect.provideService(SafeFs, fs),
    Effect.mapError((e) =>
      e._tag === "OwnershipProblem"
        ? fail(
            e.detail,
            `Use a ${agent} home only you can change (fix the ownership or permissions named), then run: ${next}`
          )
        : fail(`${e.op} ${e.path} failed: ${e.message}`, `Check the permissions of ${e.path}, then run: ${next}`)
    )
  )
