import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { type DaemonHome, makeDaemonHome, scaled } from "./support/daemon-harness.js"
import { bundledProgram } from "./support/isolated-home.js"
import { type ModelServer, modelData, serveTinyModel, useTinyModel } from "./support/model-server.js"
import { requireClaude } from "./support/real-claude.js"
import { pathWithCodex } from "./support/real-codex.js"
import { runAtTerminal, screenOf, shellLine } from "./support/terminal.js"

/**
 * The first minutes of a new person, at an 80-column terminal: a fresh home where Codex and
 * Claude Code are installed but have never run a session. `install codex` reaches Ready with
 * nothing to index, `status` and `doctor` agree, `uninstall --purge` leaves nothing of blctx's,
 * and `install claude` on the same machine reaches Ready too. The capture is what the README shows.
 */

let home: DaemonHome | undefined
let server: ModelServer | undefined
afterEach(async () => {
  home?.dispose()
  home = undefined
  await server?.close()
  server = undefined
})

const data = modelData()
const checkout = NodePath.resolve(import.meta.dirname, "..")

/** The commands a person types, in order, each with the exit code it must end with. */
const SEQUENCE: ReadonlyArray<readonly [ReadonlyArray<string>, number]> = [
  [["install", "codex"], 0],
  [["status"], 0],
  [["doctor"], 0],
  [["uninstall", "codex", "--purge"], 0],
  [["install", "claude"], 0]
]

/** A `blctx` on PATH, as `npm install -g` puts it there: the bundled entry under this Node. */
const installBlctx = (h: DaemonHome) => {
  const bin = NodePath.join(h.home, "bin")
  Fs.mkdirSync(bin, { mode: 0o700 })
  const launcher = NodePath.join(bin, "blctx")
  Fs.writeFileSync(launcher, `#!/bin/sh\nexec ${shellLine([process.execPath, bundledProgram("blctx")])} "$@"\n`, {
    mode: 0o700
  })
  return bin
}

/**
 * The session as a script: the terminal is 80 columns, each command is echoed as typed, and the
 * script stops with 100 + its index at the first command whose exit code is not the expected one.
 */
const sessionScript = () =>
  [
    "stty cols 80 rows 24",
    ...SEQUENCE.map(
      ([args, code], i) =>
        `printf '%s\\n' ${shellLine([`$ blctx ${args.join(" ")}`])}; blctx ${shellLine(args)}; test $? -eq ${code} || exit ${100 + i}`
    )
  ].join("\n")

/**
 * What the terminal received, with the test home as `~` and the checkout as `<checkout>`, as the
 * README shows it (blctx wrapped its lines for the real paths, so lines naming them end early).
 */
const readable = (h: DaemonHome, output: string) => output.replaceAll(h.home, "~").replaceAll(checkout, "<checkout>")

describe.skipIf(data === undefined)("the first minutes at an 80-column terminal, with no session yet", () => {
  it(
    "install codex, status, doctor, uninstall --purge and install claude each end as a person expects",
    async () => {
      const h = makeDaemonHome("detached")
      home = h
      server = await serveTinyModel(data as string)
      useTinyModel(h, data as string, server)
      // Both agents are installed and have made their folders, but no session has run yet.
      Fs.mkdirSync(h.codexHome, { mode: 0o700 })
      Fs.mkdirSync(NodePath.join(h.home, ".claude"), { mode: 0o700 })
      const bin = installBlctx(h)
      const { NO_COLOR: _noColor, ...personal } = h.env
      const env = {
        ...personal,
        PATH: `${bin}:${pathWithCodex()}`,
        BLCTX_CLAUDE_BIN: requireClaude(),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
        TERM: "xterm-256color"
      }
      const hooksQuestion = { question: "[Y/n]", reply: "y\r" }
      const run = await runAtTerminal(sessionScript(), env, [hooksQuestion, hooksQuestion])
      const screen = await screenOf(readable(h, run.output), 80, 24, false)
      console.log(`the first minutes at an 80-column terminal (exit ${run.code}):\n${screen}`)
      expect(run.code, screen).toBe(0)

      const ready = screen.match(/^Ready: \d+ passed, 0 failed, 0 blocked, 0 skipped\.$/gm) ?? []
      // install codex, status, doctor and install claude each end Ready.
      expect(ready.length, screen).toBe(4)
      expect(screen).toMatch(/nothing to index yet/)
      expect(screen).not.toMatch(/no history import has been run/)
      // Every title speaks of the agent the command is for.
      const claudePart = screen.slice(screen.indexOf("$ blctx install claude"))
      expect(claudePart).toContain("blctx install claude")
      expect(claudePart).not.toMatch(/Codex session discovery|blctx install codex/)
    },
    scaled(900_000)
  )
})
