import * as Fs from "node:fs"
import type { HookFs, ReadChunk } from "../src/capture/hook-fs.js"

/**
 * The hook handler's file system on node:fs, synchronous calls only: the handler does a few small
 * reads and writes, and the promise and stream modules would cost each run more start-up time
 * than its work. Plain functions, no `effect`: this module is bundled into blctx-hook.cjs.
 */

/**
 * Reads a descriptor with `fs.read`: `process.stdin` would load Node's socket and stream modules
 * (a pipe is a net.Socket), which cost the hook more start-up time than its whole work.
 */
export const readFromFd =
  (fd: number): ReadChunk =>
  (buffer, done) =>
    Fs.read(fd, buffer, 0, buffer.length, null, done)

export const nodeHookFs: HookFs = {
  lstat: (path) => Fs.lstatSync(path),
  mkdirPrivate: (path) => void Fs.mkdirSync(path, { recursive: true, mode: 0o700 }),
  openNoFollow: (path) => Fs.openSync(path, Fs.constants.O_RDONLY | Fs.constants.O_NOFOLLOW),
  fstat: (fd) => Fs.fstatSync(fd),
  readText: (fd) => Fs.readFileSync(fd, "utf8"),
  close: (fd) => Fs.closeSync(fd),
  writeNew: (path, text) => Fs.writeFileSync(path, text, { flag: "wx", mode: 0o600 }),
  link: (existing, path) => Fs.linkSync(existing, path),
  rename: (from, to) => Fs.renameSync(from, to),
  remove: (path) => Fs.rmSync(path, { force: true }),
  stdin: readFromFd(0)
}
