import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { nodeHookFs } from "../../layers/node-hook-fs.js"
import { BindingError, bindingFileName, bindingFor } from "./binding-store.js"

let dir: string
beforeEach(() => {
  dir = Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-bindings-"))
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

const HOME = "/home/me/.codex"
const now = new Date("2026-11-30T10:00:00.000Z")

describe("bindingFor", () => {
  it("creates a binding once, whole and private, and returns it again", () => {
    const first = bindingFor(nodeHookFs, dir, HOME, "s-1", now)
    expect(first).toMatchObject({ agent_home: HOME, event_session_id: "s-1", created_at: "2026-11-30T10:00:00.000Z" })
    expect(first.binding_key).not.toBe(first.session_uuid)
    expect(bindingFor(nodeHookFs, dir, HOME, "s-1", new Date())).toEqual(first)
    expect(Fs.readdirSync(dir)).toEqual([bindingFileName(HOME, "s-1")])
    expect(Fs.statSync(NodePath.join(dir, bindingFileName(HOME, "s-1"))).mode & 0o777).toBe(0o600)
  })

  it("keys by agent home and session id together", () => {
    const a = bindingFor(nodeHookFs, dir, HOME, "s-1", now)
    expect(bindingFor(nodeHookFs, dir, HOME, "s-2", now).binding_key).not.toBe(a.binding_key)
    expect(bindingFor(nodeHookFs, dir, "/other/.codex", "s-1", now).binding_key).not.toBe(a.binding_key)
    // A session id may hold NUL, a path never: the separator keeps pairs apart.
    expect(bindingFor(nodeHookFs, dir, HOME, "a\0b", now).binding_key).not.toBe(a.binding_key)
    expect(() => bindingFor(nodeHookFs, dir, "/a\0b", "c", now)).toThrow(/never holds NUL/)
  })

  it("reads the winner's binding when another handler linked it first", () => {
    const winner = {
      binding_key: "6f7c3a8e-2f1b-4f0e-9a51-0a4b6c2d9e11",
      session_uuid: "0d3f8e6a-5b4c-4a2e-8f1d-7c6b5a4e3d21",
      agent_home: HOME,
      event_session_id: "s-1",
      created_at: "2026-11-30T09:59:59.000Z"
    }
    Fs.writeFileSync(NodePath.join(dir, bindingFileName(HOME, "s-1")), JSON.stringify(winner))
    expect(bindingFor(nodeHookFs, dir, HOME, "s-1", now)).toEqual(winner)
    expect(Fs.readdirSync(dir)).toHaveLength(1)
  })

  it("refuses a missing session id, a damaged binding, or one naming another session", () => {
    expect(() => bindingFor(nodeHookFs, dir, HOME, "", now)).toThrow(BindingError)
    const path = NodePath.join(dir, bindingFileName(HOME, "s-1"))
    Fs.writeFileSync(path, '{"binding_key":')
    expect(() => bindingFor(nodeHookFs, dir, HOME, "s-1", now)).toThrow(/not valid JSON/)
    const other = bindingFor(nodeHookFs, dir, HOME, "s-2", now)
    Fs.writeFileSync(path, JSON.stringify(other))
    expect(() => bindingFor(nodeHookFs, dir, HOME, "s-1", now)).toThrow(/binds another session/)
  })

  it("never follows a link at a binding's name", () => {
    const target = NodePath.join(dir, "target.json")
    Fs.writeFileSync(target, JSON.stringify(bindingFor(nodeHookFs, dir, HOME, "s-2", now)))
    Fs.symlinkSync(target, NodePath.join(dir, bindingFileName(HOME, "s-1")))
    expect(() => bindingFor(nodeHookFs, dir, HOME, "s-1", now)).toThrow()
  })
})
