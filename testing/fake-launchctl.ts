import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { Effect, Either, Layer, Option } from "effect"
import { Launchctl, LaunchctlError } from "../src/service/launchctl.js"
import { type LaunchAgent, readLaunchAgent } from "../src/service/launchd-plist.js"

interface Loaded {
  readonly agent: LaunchAgent
  child: ChildProcess | undefined
}

/**
 * A launchctl for tests (no launchd runs on Linux): it keeps the GUI domain's agents in memory,
 * refuses a plist launchd would refuse (not a well-formed property list, no Label or
 * ProgramArguments, a Label other than the file's name), and runs the program the way launchd
 * does: at bootstrap when RunAtLoad, again after a failing exit when KeepAlive says so, stopped
 * with SIGTERM at bootout. Every call is recorded as the command line the real one would get.
 */
export const makeFakeLaunchctl = (uid = 501) => {
  const domain = `gui/${uid}`
  const calls: Array<string> = []
  const agents = new Map<string, Loaded>()

  const refuse = (command: string, detail: string) => new LaunchctlError({ command, detail })

  const start = (loaded: Loaded) => {
    const [program, ...args] = loaded.agent.programArguments
    if (program === undefined) return
    const log = loaded.agent.logFile === undefined ? "ignore" : Fs.openSync(loaded.agent.logFile, "a", 0o600)
    const child = spawn(program, args, { detached: true, stdio: ["ignore", log, log] })
    if (typeof log === "number") Fs.closeSync(log)
    loaded.child = child
    child.on("exit", (code) => {
      if (loaded.child !== child) return
      loaded.child = undefined
      if (code !== 0 && loaded.agent.restartOnFailure && agents.get(loaded.agent.label) === loaded) start(loaded)
    })
  }

  const stop = (loaded: Loaded) =>
    Effect.async<void>((resume) => {
      const child = loaded.child
      loaded.child = undefined
      if (child === undefined || child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000)
      child.once("exit", () => {
        clearTimeout(timer)
        resume(Effect.void)
      })
      child.kill("SIGTERM")
    })

  const layer = Layer.succeed(
    Launchctl,
    Launchctl.of({
      domain,
      bootstrap: (plistPath) =>
        Effect.suspend(() => {
          const command = `launchctl bootstrap ${domain} ${plistPath}`
          calls.push(command)
          const text = Option.liftThrowable(() => Fs.readFileSync(plistPath, "utf8"))()
          if (Option.isNone(text)) return Effect.fail(refuse(command, "Bootstrap failed: 2: No such file or directory"))
          const agent = readLaunchAgent(text.value)
          if (Either.isLeft(agent))
            return Effect.fail(refuse(command, `Bootstrap failed: 5: Input/output error (${agent.left})`))
          if (`${agent.right.label}.plist` !== NodePath.basename(plistPath)) {
            return Effect.fail(
              refuse(
                command,
                `Bootstrap failed: 5: Input/output error (Label ${agent.right.label} is not the file's name)`
              )
            )
          }
          if (agents.has(agent.right.label))
            return Effect.fail(refuse(command, "Bootstrap failed: 37: Operation already in progress"))
          const loaded: Loaded = { agent: agent.right, child: undefined }
          agents.set(agent.right.label, loaded)
          if (agent.right.runAtLoad) start(loaded)
          return Effect.void
        }),
      bootout: (label) =>
        Effect.suspend(() => {
          calls.push(`launchctl bootout ${domain}/${label}`)
          const loaded = agents.get(label)
          if (loaded === undefined) return Effect.succeed(false)
          agents.delete(label)
          return Effect.as(stop(loaded), true)
        }),
      kickstart: (label, restart) =>
        Effect.suspend(() => {
          const command = `launchctl kickstart ${restart ? "-k " : ""}${domain}/${label}`
          calls.push(command)
          const loaded = agents.get(label)
          if (loaded === undefined) return Effect.fail(refuse(command, "Could not find service in domain for user gui"))
          if (loaded.child !== undefined && !restart) return Effect.void
          return Effect.map(loaded.child === undefined ? Effect.void : stop(loaded), () => start(loaded))
        }),
      print: (label) =>
        Effect.sync(() => {
          calls.push(`launchctl print ${domain}/${label}`)
          const loaded = agents.get(label)
          if (loaded === undefined) return Option.none()
          const pid = loaded.child?.pid
          return Option.some({
            state: pid === undefined ? "not running" : "running",
            pid: pid === undefined ? Option.none() : Option.some(pid)
          })
        })
    })
  )

  /** Stops every program it started (a test's cleanup); the agents are read when it runs. */
  const shutdown = Effect.suspend(() => {
    const loaded = [...agents.values()]
    agents.clear()
    return Effect.forEach(loaded, stop, { discard: true })
  })
  return { layer, calls, agents, shutdown } as const
}
