import { Effect, SynchronizedRef } from "effect"

/**
 * One answer per question for the length of a command. `blctx status` asks an agent's CLI the same
 * thing from several steps (codex_mcp and mcp_health both read the registration), and each
 * question is a multi-second Node start: the first asker runs it, everyone after (also while it
 * is still running) shares its result, failure included. A change through the same CLI (add,
 * remove) forgets what was learned about that home, so install's verify after an add asks again.
 */
export const shareAnswers = <A, E>(ask: (home: string, name: string) => Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    const answers = yield* SynchronizedRef.make(new Map<string, Effect.Effect<A, E>>())
    const keyOf = (home: string, name: string) => JSON.stringify([home, name])

    const read = (home: string, name: string): Effect.Effect<A, E> =>
      Effect.flatten(
        SynchronizedRef.modifyEffect(answers, (known) => {
          const key = keyOf(home, name)
          const answer = known.get(key)
          if (answer !== undefined) return Effect.succeed([answer, known] as const)
          return Effect.map(Effect.cached(ask(home, name)), (once) => [once, new Map(known).set(key, once)] as const)
        })
      )

    /** Forgets every answer about `home`; the next read asks again. */
    const forget = (home: string) =>
      SynchronizedRef.update(answers, (known) => {
        const kept = new Map(known)
        for (const key of known.keys()) if ((JSON.parse(key) as [string, string])[0] === home) kept.delete(key)
        return kept
      })

    return { read, forget } as const
  })

/** An agent CLI port's MCP methods, whatever its entries and errors (`never`: any server type fits). */
interface McpMethods {
  readonly getMcpServer: (home: string, name: string) => Effect.Effect<unknown, unknown>
  readonly addMcpServer: (home: string, server: never) => Effect.Effect<unknown, unknown>
  readonly removeMcpServer: (home: string, name: string) => Effect.Effect<unknown, unknown>
}

/**
 * An agent's CLI port asking `mcp get` (or its agent's listing) once per home and name, until
 * blctx adds or removes there through the same CLI. The port keeps its type: each method is
 * wrapped with its own signature, which the cast restates.
 */
export const shareMcpAnswers = <C extends McpMethods>(cli: C): Effect.Effect<C> =>
  Effect.map(
    shareAnswers(cli.getMcpServer),
    ({ read, forget }) =>
      ({
        ...cli,
        getMcpServer: read,
        addMcpServer: (home: string, server: never) => Effect.ensuring(cli.addMcpServer(home, server), forget(home)),
        removeMcpServer: (home: string, name: string) => Effect.ensuring(cli.removeMcpServer(home, name), forget(home))
      }) as unknown as C
  )
