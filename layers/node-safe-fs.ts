import { randomBytes } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as NodePath from "node:path"
import { Effect, Layer, Option } from "effect"
import { type EntryKind, FsError, SafeFs, type StatEntry } from "../src/fs/safe-fs.js"

const codeOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "code" in error ? String(error.code) : "EUNKNOWN"

const attempt = <A>(op: string, path: string, f: () => Promise<A>) =>
  Effect.tryPromise({
    try: f,
    catch: (error) =>
      new FsError({ op, path, code: codeOf(error), message: error instanceof Error ? error.message : String(error) })
  })

const kindOf = (stats: import("node:fs").Stats): EntryKind => {
  if (stats.isSymbolicLink()) return "symlink"
  if (stats.isDirectory()) return "directory"
  if (stats.isFile()) return "file"
  if (stats.isSocket()) return "socket"
  return "other"
}

const entryOf = (stats: import("node:fs").Stats): StatEntry => ({
  kind: kindOf(stats),
  mode: stats.mode & 0o7777,
  size: stats.size,
  mtimeMs: stats.mtimeMs,
  ino: stats.ino,
  nlink: stats.nlink,
  uid: stats.uid,
  dev: stats.dev
})

const fsyncPath = async (path: string) => {
  const handle = await Fs.open(path, "r")
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

export const NodeSafeFsLive = Layer.succeed(SafeFs, {
  lstat: (path) =>
    Effect.tryPromise({
      try: () => Fs.lstat(path),
      catch: (error) => error
    }).pipe(
      Effect.map((stats) => Option.some(entryOf(stats))),
      Effect.catchAll((error) =>
        codeOf(error) === "ENOENT" || codeOf(error) === "ENOTDIR"
          ? Effect.succeed(Option.none<StatEntry>())
          : Effect.fail(new FsError({ op: "lstat", path, code: codeOf(error), message: String(error) }))
      )
    ),
  makeDirectory: (path, mode) =>
    attempt("mkdir", path, async () => {
      await Fs.mkdir(path, { mode })
      // mkdir's mode is filtered by the umask; set it exactly so the directory is what we asked for,
      // through a descriptor of the directory itself: a link swapped in after mkdir is never chmodded.
      const handle = await Fs.open(path, Fs.constants.O_RDONLY | Fs.constants.O_DIRECTORY | Fs.constants.O_NOFOLLOW)
      try {
        await handle.chmod(mode)
      } finally {
        await handle.close()
      }
    }),
  writability: (path) =>
    Effect.promise(() =>
      Fs.access(path, Fs.constants.W_OK).then(
        () => "writable" as const,
        (e: NodeJS.ErrnoException) => (e.code === "EROFS" ? ("read_only_filesystem" as const) : ("denied" as const))
      )
    ),
  readText: (path) => attempt("read", path, () => Fs.readFile(path, "utf8")),
  readOpened: (path, admit) =>
    Effect.acquireUseRelease(
      attempt("open", path, () =>
        Fs.open(path, Fs.constants.O_RDONLY | Fs.constants.O_NOFOLLOW | Fs.constants.O_NONBLOCK)
      ),
      (handle) =>
        attempt("fstat", path, () => handle.stat()).pipe(
          Effect.flatMap((stats) => admit(entryOf(stats))),
          Effect.zipRight(attempt("read", path, () => handle.readFile())),
          Effect.map((bytes): Uint8Array => bytes)
        ),
      (handle) => Effect.promise(() => handle.close())
    ),
  readDirectory: (path) => attempt("readdir", path, () => Fs.readdir(path)),
  writeAtomic: (path, content, mode) =>
    attempt("write", path, async () => {
      const dir = NodePath.dirname(path)
      const temp = NodePath.join(dir, `.${NodePath.basename(path)}.${randomBytes(6).toString("hex")}.tmp`)
      const handle = await Fs.open(temp, "wx", mode)
      try {
        await handle.writeFile(content)
        await handle.chmod(mode)
        await handle.sync()
      } finally {
        await handle.close()
      }
      try {
        await Fs.rename(temp, path)
      } catch (error) {
        await Fs.rm(temp, { force: true })
        throw error
      }
      await fsyncPath(dir)
    }),
  renameDurable: (from, to) =>
    attempt("rename", to, async () => {
      await Fs.rename(from, to)
      await fsyncPath(NodePath.dirname(to))
    }),
  fsyncFile: (path) => attempt("fsync", path, () => fsyncPath(path)),
  removeFile: (path) => attempt("unlink", path, () => Fs.rm(path, { force: true })),
  removeEmptyDirectory: (path) =>
    Effect.tryPromise({ try: () => Fs.rmdir(path), catch: (error) => error }).pipe(
      Effect.as(true),
      Effect.catchAll((error) => {
        const code = codeOf(error)
        if (code === "ENOTEMPTY" || code === "EEXIST" || code === "ENOENT") return Effect.succeed(false)
        return Effect.fail(new FsError({ op: "rmdir", path, code, message: String(error) }))
      })
    ),
  exists: (path) =>
    Effect.promise(() =>
      Fs.lstat(path).then(
        () => true,
        () => false
      )
    ),
  readLink: (path) => attempt("readlink", path, () => Fs.readlink(path)),
  realPath: (path) => attempt("realpath", path, () => Fs.realpath(path)),
  // Where there are no user ids (not POSIX), 0 stands for "the only user".
  userId: process.getuid?.() ?? 0
})

/**
 * `SafeFs.writeAtomic` on the live filesystem, for layers that write one file of their own (a
 * unit, a plist, a launch record) without taking SafeFs as a requirement.
 */
export const writeAtomicLive = (path: string, content: string | Uint8Array, mode: number) =>
  Effect.flatMap(SafeFs, (fs) => fs.writeAtomic(path, content, mode)).pipe(Effect.provide(NodeSafeFsLive))
