import { spawn } from "node:child_process"
import xterm from "@xterm/headless"
import { scaled } from "./daemon-harness.js"

/** A question a program asks at the terminal and what the person types once it has appeared. */
export interface Answer {
  readonly question: string
  readonly reply: string
}

const shellQuote = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`

/** A shell command line of these words, each quoted. */
export const shellLine = (words: ReadonlyArray<string>) => words.map(shellQuote).join(" ")

/**
 * Runs a shell script under a real pseudo-terminal (util-linux `script`), so the programs it runs
 * see a TTY on stdin and stdout exactly as at a person's keyboard. Each answer is typed once its
 * question has appeared for the n-th time (the n-th answer waits for the n-th question seen after
 * the previous reply). Returns the exit code and every byte the terminal received.
 */
export const runAtTerminal = (script: string, env: NodeJS.ProcessEnv, answers: ReadonlyArray<Answer>) =>
  new Promise<{ readonly code: number | null; readonly output: string }>((resolve, reject) => {
    const child = spawn("script", ["--quiet", "--return", "--flush", "--command", script, "/dev/null"], {
      env,
      stdio: ["pipe", "pipe", "pipe"]
    })
    let output = ""
    let next = 0
    let searchFrom = 0
    const timer = setTimeout(() => child.kill("SIGKILL"), scaled(600_000))
    const answerIfAsked = () => {
      const answer = answers[next]
      if (answer === undefined) return
      const at = output.indexOf(answer.question, searchFrom)
      if (at < 0) return
      next++
      searchFrom = at + answer.question.length
      child.stdin.write(answer.reply)
    }
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      output += d
      answerIfAsked()
    })
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      output += d
    })
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })

/**
 * What a terminal of this size shows after receiving `output` (scrollback and screen). `joinWrapped`
 * joins a line the terminal wrapped back into one logical line; without it the lines are as the
 * person sees them at that width.
 */
export const screenOf = (output: string, columns: number, rows: number, joinWrapped = true) =>
  new Promise<string>((resolve) => {
    const term = new xterm.Terminal({ cols: columns, rows, allowProposedApi: true, scrollback: 10_000 })
    term.write(output, () => {
      const buffer = term.buffer.active
      const lines: Array<string> = []
      for (let i = 0; i < buffer.length; i++) {
        const line = buffer.getLine(i)
        if (line === undefined) continue
        const text = line.translateToString(false)
        if (joinWrapped && line.isWrapped && lines.length > 0) lines.push(`${lines.pop() ?? ""}${text}`)
        else lines.push(text)
      }
      for (let i = 0; i < lines.length; i++) lines[i] = lines[i]?.trimEnd() ?? ""
      while (lines.at(-1) === "") lines.pop()
      term.dispose()
      resolve(lines.join("\n"))
    })
  })
