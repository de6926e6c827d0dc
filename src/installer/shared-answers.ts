import { Effect, SynchronizedRef } from "effect"
import { ClaudeCli, type ClaudeCliShape } from "../claude/claude-cli.js"
import { CodexCli, type CodexCliShape } from "../codex/codex-cli.js"
import { GeminiCli, type GeminiCliShape } from "../gemini/gemini-cli.js"

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

/** `mcp get` asked once per home and name, until blctx adds or removes there through the same CLI. */
const withSharedAnswers = <A, E, S, AddA, AddE, RemoveA, RemoveE>(cli: {
  readonly getMcpServer: (home: string, name: string) => Effect.Effect<A, E>
  readonly addMcpServer: (home: string, server: S) => Effect.Effect<AddA, AddE>
  readonly removeMcpServer: (home: string, name: string) => Effect.Effect<RemoveA, RemoveE>
}) =>
  Effect.map(shareAnswers(cli.getMcpServer), ({ read, forget }) => ({
    getMcpServer: read,
    addMcpServer: (home: string, server: S) => Effect.ensuring(cli.addMcpServer(home, server), forget(home)),
    removeMcpServer: (home: string, name: string) => Effect.ensuring(cli.removeMcpServer(home, name), forget(home))
  }))

/** Claude Code's CLI asking `claude mcp get` once per home and name, until blctx adds or removes there. */
export const shareClaudeAnswers = (cli: ClaudeCliShape) =>
  Effect.map(withSharedAnswers(cli), (shared) => ClaudeCli.of({ locate: cli.locate, ...shared }))

/** The Codex CLI asking `codex mcp get` once per home and name, until blctx adds or removes there. */
export const shareCodexAnswers = (cli: CodexCliShape) =>
  Effect.map(withSharedAnswers(cli), (shared) => CodexCli.of({ locate: cli.locate, ...shared }))

/** Gemini CLI asking `gemini mcp list` once per home and name, until blctx adds or removes there. */
export const shareGeminiAnswers = (cli: GeminiCliShape) =>
  Effect.map(withSharedAnswers(cli), (shared) => GeminiCli.of({ locate: cli.locate, ...shared }))
