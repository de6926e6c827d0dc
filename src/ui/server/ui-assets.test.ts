import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { CSRF_PLACEHOLDER, loadUiAssets, missingPageText, pageWithCsrf } from "./ui-assets.js"

const folderWith = (files: Readonly<Record<string, string>>) => {
  const folder = Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-ui-assets-"))
  for (const [name, text] of Object.entries(files)) Fs.writeFileSync(NodePath.join(folder, name), text)
  return folder
}

const load = (folder: string) => loadUiAssets(folder).pipe(Effect.provide(NodeFileSystem.layer))

describe("the page's files", () => {
  it.effect("are the folder's flat regular files of a known type, read once, with their types", () =>
    Effect.gen(function* () {
      const outside = folderWith({ "secret.js": "outside" })
      const folder = folderWith({ "index.html": CSRF_PLACEHOLDER, "app.js": "js", "app.css": "css", "run.sh": "no" })
      Fs.mkdirSync(NodePath.join(folder, "sub.js"))
      Fs.symlinkSync(NodePath.join(outside, "secret.js"), NodePath.join(folder, "link.js"))
      const assets = yield* load(folder)
      const files = Option.getOrThrow(assets.files)
      expect([...files.keys()].sort()).toEqual(["app.css", "app.js", "index.html"])
      expect(files.get("app.js")?.contentType).toBe("text/javascript; charset=utf-8")
      expect(files.get("app.css")?.contentType).toBe("text/css; charset=utf-8")
      expect(files.get("index.html")?.contentType).toBe("text/html; charset=utf-8")
      // Read once: a change on disk is not served.
      Fs.writeFileSync(NodePath.join(folder, "app.js"), "changed")
      expect(new TextDecoder().decode(files.get("app.js")?.bytes)).toBe("js")
    })
  )

  it.effect("are none without the folder or its index.html, and the page's 500 says to build it", () =>
    Effect.gen(function* () {
      const missing = NodePath.join(tmpdir(), "blctx-ui-no-such-folder")
      expect(Option.isNone((yield* load(missing)).files)).toBe(true)
      expect(Option.isNone((yield* load(folderWith({ "app.js": "js" }))).files)).toBe(true)
      expect(missingPageText(missing)).toContain("npm run build")
      expect(missingPageText(missing)).toContain(missing)
    })
  )

  it("fill the CSRF placeholder of index.html with the token and the daemon's PID, and only that", () => {
    const html = `<head>${CSRF_PLACEHOLDER}</head><body>$& content=""</body>`
    expect(pageWithCsrf(html, "tok-EN_1", 4242)).toEqual(
      Option.some(
        '<head><meta name="blctx-csrf" content="tok-EN_1" data-daemon-pid="4242"></head><body>$& content=""</body>'
      )
    )
    expect(Option.isNone(pageWithCsrf("<head></head>", "t", 1))).toBe(true)
  })
})
