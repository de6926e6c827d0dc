import { FileSystem } from "@effect/platform"
import { Context, Effect, Option } from "effect"
import { ASSET_NAME } from "./ui-checks.js"

/** The folder the page is served from: the package's `dist/ui`, built by `npm run build`. */
export class UiAssetFolder extends Context.Tag("blctx/UiAssetFolder")<UiAssetFolder, string>() {}

/** The types the page's files are served with; a file of any other kind is not served. */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  json: "application/json",
  map: "application/json",
  svg: "image/svg+xml",
  png: "image/png",
  ico: "image/x-icon",
  woff2: "font/woff2",
  txt: "text/plain; charset=utf-8"
}

export const contentTypeOf = (name: string): string | undefined => {
  const dot = name.lastIndexOf(".")
  return dot === -1 ? undefined : CONTENT_TYPES[name.slice(dot + 1).toLowerCase()]
}

export interface UiAsset {
  readonly contentType: string
  readonly bytes: Uint8Array
}

/**
 * The page's files, read once when the listener starts: a flat allowlist of regular files (not
 * links, not folders) with a known type, held in memory; a page built later is served from the
 * daemon's next start. Nothing else is ever read from disk for a request. `none` when the
 * folder cannot be read (the page was not built).
 */
export interface UiAssets {
  readonly folder: string
  readonly files: Option.Option<ReadonlyMap<string, UiAsset>>
}

/** The text `/` answers when there is no page to serve. */
export const missingPageText = (folder: string) =>
  `The viewer's page is not built (no index.html in ${folder}). Build it with: npm run build`

const readAsset = (fs: FileSystem.FileSystem, folder: string, name: string) =>
  Effect.gen(function* () {
    const contentType = contentTypeOf(name)
    if (!ASSET_NAME.test(name) || contentType === undefined) return Option.none()
    const path = `${folder}/${name}`
    // A symbolic link could point anywhere on disk: only the folder's own regular files are served.
    if (Option.isSome(yield* Effect.option(fs.readLink(path)))) return Option.none()
    const info = yield* fs.stat(path)
    if (info.type !== "File") return Option.none()
    return Option.some([name, { contentType, bytes: yield* fs.readFile(path) }] as const)
  }).pipe(Effect.orElseSucceed(() => Option.none()))

/** Reads the page's folder once (see `UiAssets`). */
export const loadUiAssets = Effect.fn("loadUiAssets")(function* (folder: string) {
  const fs = yield* FileSystem.FileSystem
  const names = yield* Effect.option(fs.readDirectory(folder))
  if (Option.isNone(names)) return { folder, files: Option.none() } satisfies UiAssets
  const read = yield* Effect.forEach(names.value, (name) => readAsset(fs, folder, name))
  const files = new Map(read.flatMap((entry) => (Option.isSome(entry) ? [entry.value] : [])))
  return { folder, files: files.has("index.html") ? Option.some(files) : Option.none() } satisfies UiAssets
})

/** The placeholder the page's index.html carries for its session's CSRF token. */
export const CSRF_PLACEHOLDER = '<meta name="blctx-csrf" content="">'

/**
 * index.html with the session's CSRF token in its placeholder, and the daemon's PID beside it (a
 * page whose daemon stops answering names the process to resume); `none` without a placeholder.
 */
export const pageWithCsrf = (html: string, csrf: string, daemonPid: number): Option.Option<string> =>
  html.includes(CSRF_PLACEHOLDER)
    ? Option.some(
        html.replace(
          CSRF_PLACEHOLDER,
          () => `<meta name="blctx-csrf" content="${csrf}" data-daemon-pid="${Math.trunc(daemonPid)}">`
        )
      )
    : Option.none()
