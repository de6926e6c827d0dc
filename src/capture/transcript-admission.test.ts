import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { NodeSafeFsLive } from "../../layers/node-safe-fs.js"
import { transcriptRefusal, transcriptRoots } from "./transcript-admission.js"

let base: string
beforeEach(() => {
  base = Fs.realpathSync(Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-admit-")))
})
afterEach(() => Fs.rmSync(base, { recursive: true, force: true }))

const refusal = (path: string, agent: string, home: string) =>
  transcriptRefusal(path, agent, home).pipe(Effect.provide(NodeSafeFsLive), Effect.map(Option.getOrNull))

const file = (path: string) => {
  Fs.mkdirSync(NodePath.dirname(path), { recursive: true })
  Fs.writeFileSync(path, "{}\n")
  return path
}

describe("which transcript paths a hook may have blctx read", () => {
  it("the roots are the agent's session folders", () => {
    expect(transcriptRoots("codex", "/h/.codex")).toEqual(["/h/.codex/sessions", "/h/.codex/archived_sessions"])
    expect(transcriptRoots("claude", "/h/.claude")).toEqual(["/h/.claude/projects"])
  })

  it.effect("admits a file of one's own in them, or one not written yet; refuses the rest of the home", () =>
    Effect.gen(function* () {
      const claude = NodePath.join(base, "claude")
      const mine = file(NodePath.join(claude, "projects", "-home-me-app", "s.jsonl"))
      expect(yield* refusal(mine, "claude", claude)).toBeNull()
      expect(yield* refusal(NodePath.join(claude, "projects", "-x", "later.jsonl"), "claude", claude)).toBeNull()
      const settings = file(NodePath.join(claude, "history.jsonl"))
      expect(yield* refusal(settings, "claude", claude)).toMatch(
        /^refused: .* is outside the Claude Code transcript folders/
      )
      // A Codex home's folders are not Claude Code's.
      expect(yield* refusal(mine, "codex", claude)).toMatch(/is outside the Codex transcript folders/)
    })
  )

  it.effect("admits a home behind a link of one's own, named by either path", () =>
    Effect.gen(function* () {
      const real = NodePath.join(base, "data", "codex")
      const rollout = file(NodePath.join(real, "sessions", "2026", "r.jsonl"))
      const home = NodePath.join(base, "codex-home")
      Fs.symlinkSync(real, home)
      expect(yield* refusal(rollout, "codex", home)).toBeNull()
      expect(yield* refusal(NodePath.join(home, "sessions", "2026", "r.jsonl"), "codex", home)).toBeNull()
    })
  )
})
