import * as NodePath from "node:path"
import * as v from "valibot"
import { MAX_EVENT_SESSION_ID_CHARS, MAX_HOOK_PATH_CHARS } from "./hook-event.js"
import type { HookFs } from "./hook-fs.js"
import { sha256Hex } from "./sha256.js"
import { uniqueSuffix } from "./unique-name.js"

/**
 * blctx's own identity for an agent's session: a binding key (what the agent passes to
 * `open_session`) and a session UUID, per (agent home, event session id). The agent's session id
 * is only a hint within its home, so it is never blctx's identity; a fork (a new session id)
 * gets a binding of its own. One file per binding in `<dataDir>/capture/bindings/`, named by
 * the SHA-256 of the pair, written once and never changed. Must not import `effect`.
 */
export const Binding = v.object({
  binding_key: v.pipe(v.string(), v.uuid()),
  session_uuid: v.pipe(v.string(), v.uuid()),
  agent_home: v.pipe(v.string(), v.maxLength(MAX_HOOK_PATH_CHARS)),
  event_session_id: v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_EVENT_SESSION_ID_CHARS)),
  created_at: v.pipe(v.string(), v.isoTimestamp())
})
export type Binding = v.InferOutput<typeof Binding>

export class BindingError extends Error {
  override readonly name = "BindingError"
}

/**
 * The binding's file name: the pair hashed (SHA-256), so any session id is a safe, fixed-length
 * name. Hashed in JavaScript (`sha256.ts`): every hook event computes it, and node:crypto would
 * cost each one more start-up time than the rest of its work.
 */
export const bindingFileName = (agentHome: string, eventSessionId: string) =>
  `${sha256Hex(`${agentHome}\0${eventSessionId}`)}.json`

/** A binding larger than this is not one of ours. */
const MAX_BINDING_BYTES = 16_384

/** The binding in `path`, or undefined when there is none; a file that is not a whole binding throws. */
const readBinding = (fs: HookFs, path: string, agentHome: string, eventSessionId: string): Binding | undefined => {
  let text: string
  try {
    const fd = fs.openNoFollow(path)
    try {
      const stat = fs.fstat(fd)
      if (!stat.isFile() || stat.size > MAX_BINDING_BYTES) throw new BindingError(`${path} is not a binding file`)
      text = fs.readText(fd)
    } finally {
      fs.close(fd)
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
    throw error
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw new BindingError(`${path} is not valid JSON`)
  }
  const decoded = v.safeParse(Binding, json)
  if (!decoded.success) throw new BindingError(`${path} is not a binding`)
  if (decoded.output.agent_home !== agentHome || decoded.output.event_session_id !== eventSessionId) {
    throw new BindingError(`${path} binds another session`)
  }
  return decoded.output
}

/**
 * The binding of (agentHome, eventSessionId), created on first use. A new binding is written
 * whole under a temp name, then hard-linked to its final name: link() never replaces an existing
 * name, so when handlers race on a session's first events exactly one link succeeds, the others
 * read the winner's, and no reader ever sees a partly written binding.
 */
export const bindingFor = (
  fs: HookFs,
  bindingsDir: string,
  agentHome: string,
  eventSessionId: string,
  now: Date
): Binding => {
  if (eventSessionId === "") throw new BindingError("a binding needs the agent's session id")
  // A path never holds NUL, so the separator in the file name's hash is unambiguous.
  if (agentHome.includes("\0")) throw new BindingError("an agent home is a path, which never holds NUL")
  const name = bindingFileName(agentHome, eventSessionId)
  const path = NodePath.join(bindingsDir, name)
  const existing = readBinding(fs, path, agentHome, eventSessionId)
  if (existing !== undefined) return existing

  const fresh: Binding = {
    // Only a session's first event gets here; the global Web Crypto is loaded on that first use.
    binding_key: globalThis.crypto.randomUUID(),
    session_uuid: globalThis.crypto.randomUUID(),
    agent_home: agentHome,
    event_session_id: eventSessionId,
    created_at: now.toISOString()
  }
  const temp = NodePath.join(bindingsDir, `.${name}.${process.pid}.${uniqueSuffix()}.tmp`)
  try {
    fs.writeNew(temp, JSON.stringify(fresh))
    fs.link(temp, path)
    return fresh
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    const winner = readBinding(fs, path, agentHome, eventSessionId)
    if (winner === undefined) throw new BindingError(`${path} vanished while it was being read`)
    return winner
  } finally {
    fs.remove(temp)
  }
}
