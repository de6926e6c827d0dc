// Preloaded into blctx-mcp (`node --import <this file>`) by tests that need its full server to be
// still loading: the import of the full server's module (programs/mcp-main, a chunk of the bundle)
// waits until the file named by BLCTX_TEST_MCP_GATE exists. When the import is asked for, the file
// named by BLCTX_TEST_MCP_GATE with ".asked" appended is written, so a test can see the gate held.
import * as Fs from "node:fs"
import { register } from "node:module"
import { isMainThread } from "node:worker_threads"

if (isMainThread) register(import.meta.url, { data: { gate: process.env.BLCTX_TEST_MCP_GATE } })

let gate

export const initialize = (data) => {
  gate = data.gate
}

const opened = () =>
  new Promise((resolve) => {
    const look = () => (Fs.existsSync(gate) ? resolve() : setTimeout(look, 20))
    look()
  })

export const resolve = async (specifier, context, next) => {
  if (gate !== undefined && /mcp-main/.test(specifier)) {
    Fs.writeFileSync(`${gate}.asked`, specifier)
    await opened()
  }
  return next(specifier, context)
}
