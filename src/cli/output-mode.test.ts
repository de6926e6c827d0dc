import { describe, expect, it } from "@effect/vitest"
import { decideOutputMode } from "./output-mode.js"

const none = { json: false, noColor: false }

describe("decideOutputMode", () => {
  it("colors only a terminal", () => {
    expect(decideOutputMode({ flags: none, stdoutTty: true, stdinTty: true, noColorEnv: undefined }).color).toBe(true)
    expect(decideOutputMode({ flags: none, stdoutTty: false, stdinTty: true, noColorEnv: undefined }).color).toBe(false)
  })

  it("honours --no-color and --json", () => {
    const tty = { stdoutTty: true, stdinTty: true, noColorEnv: undefined }
    expect(decideOutputMode({ flags: { json: false, noColor: true }, ...tty }).color).toBe(false)
    expect(decideOutputMode({ flags: { json: true, noColor: false }, ...tty })).toEqual({
      json: true,
      color: false,
      interactive: false
    })
  })

  it("treats NO_COLOR as set when it is not empty (no-color.org)", () => {
    const tty = { flags: none, stdoutTty: true, stdinTty: true }
    expect(decideOutputMode({ ...tty, noColorEnv: "1" }).color).toBe(false)
    expect(decideOutputMode({ ...tty, noColorEnv: "0" }).color).toBe(false)
    expect(decideOutputMode({ ...tty, noColorEnv: "" }).color).toBe(true)
  })

  it("is interactive only with both ends on a terminal", () => {
    expect(decideOutputMode({ flags: none, stdoutTty: true, stdinTty: false, noColorEnv: "1" }).interactive).toBe(false)
    expect(decideOutputMode({ flags: none, stdoutTty: true, stdinTty: true, noColorEnv: "1" }).interactive).toBe(true)
  })
})
