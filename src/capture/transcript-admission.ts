import * as NodePath from "node:path"
import { Effect, Option } from "effect"
import { SafeFs } from "../fs/safe-fs.js"
import { REFUSED_PREFIX } from "../retrieval/capture-status.js"
import { TRANSCRIPT_FORMATS } from "../transcripts/formats/registry.js"

/** The folders an agent home keeps its sessions in: its TranscriptFormat's session folders. */
export const transcriptRoots = (agent: string, home: string): ReadonlyArray<string> =>
  TRANSCRIPT_FORMATS.filter((f) => f.agent === agent).flatMap((f) => f.sessionFolders(home).map((s) => s.path))

const labelOf = (agent: string) => TRANSCRIPT_FORMATS.find((f) => f.agent === agent)?.label ?? agent

const isWithin = (path: string, root: string) => path.startsWith(root.endsWith("/") ? root : `${root}/`)

const refused = (reason: string) => Option.some(`${REFUSED_PREFIX}${reason}`)

/**
 * Whether the daemon may read a transcript path a hook payload named, or why not. A payload can
 * name any file, so only a regular file this user owns, inside the session folders of the agent
 * home the capture came from, is read: the path must lie there as written (normalized, so `..`
 * cannot climb out) and where its links lead; the file itself is looked at with lstat, never
 * followed or opened. A path that does not exist yet is admitted: the reconciler waits for it.
 */
export const transcriptRefusal = (
  path: string,
  agent: string,
  home: string
): Effect.Effect<Option.Option<string>, never, SafeFs> =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const roots = transcriptRoots(agent, home)
    const where = `the ${labelOf(agent)} transcript folders (${roots.join(", ")})`
    const realRoots: Array<string> = []
    for (const root of roots) {
      const real = yield* fs.realPath(root).pipe(Effect.option)
      if (Option.isSome(real)) realRoots.push(real.value)
    }
    // As written: under a root, or under where a root's links lead (an agent may name the real path).
    const named = [...roots, ...realRoots]
    if (NodePath.normalize(path) !== path || !named.some((root) => isWithin(path, root))) {
      return refused(`${path} is outside ${where}`)
    }
    const folder = yield* fs.realPath(NodePath.dirname(path)).pipe(Effect.option)
    // Its folder does not exist yet: nothing to read, and nothing another user put there.
    if (Option.isNone(folder)) return Option.none()
    if (!realRoots.some((root) => folder.value === root || isWithin(folder.value, root))) {
      return refused(`${path} leads outside ${where} through a link`)
    }
    const entry = yield* fs.lstat(path).pipe(Effect.option)
    if (Option.isNone(entry) || Option.isNone(entry.value)) return Option.none()
    const found = entry.value.value
    if (found.kind === "symlink") return refused(`${path} is a symbolic link, which blctx never follows`)
    if (found.kind !== "file") return refused(`${path} is a ${found.kind}, not a regular file`)
    if (found.uid !== fs.userId) return refused(`${path} belongs to user ${found.uid}, not to you`)
    return Option.none()
  })
