import { afterAll, beforeAll } from "vitest"

// Unit files share one module graph and process per worker (isolate: false in vitest.config.ts):
// a file that leaves process.env or the working directory changed changes the files run after it
// in the same worker. Each file must leave both as it found them; this fails the one that does not.
let env: Record<string, string | undefined> = {}
let cwd = ""

beforeAll(() => {
  env = { ...process.env }
  cwd = process.cwd()
})

afterAll(() => {
  const names = new Set([...Object.keys(env), ...Object.keys(process.env)])
  const changed = [...names].filter((name) => env[name] !== process.env[name]).map((name) => `process.env.${name}`)
  if (process.cwd() !== cwd) changed.push("the working directory")
  if (changed.length > 0) {
    throw new Error(`this file left ${changed.join(", ")} changed: restore it (unit files share one process)`)
  }
})
