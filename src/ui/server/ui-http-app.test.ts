import * as Http from "node:http"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { NodeUiListenerLive } from "../../../layers/node-ui-listener.js"
import { UiAssetFolder } from "./ui-assets.js"
import { SECURITY_HEADERS } from "./ui-http-app.js"
import { UiServer } from "./ui-server.js"

const get = (port: number, path: string, headers: Record<string, string> = {}) =>
  Effect.async<{ status: number; headers: Http.IncomingHttpHeaders; body: string }>((resume) => {
    const request = Http.get({ host: "127.0.0.1", port, path, headers, agent: false }, (response) => {
      let body = ""
      response.setEncoding("utf8").on("data", (d: string) => {
        body += d
      })
      response.on("end", () =>
        resume(Effect.succeed({ status: response.statusCode ?? 0, headers: response.headers, body }))
      )
    })
    request.on("error", (e) => resume(Effect.die(e)))
  })

describe("the viewer without its page", () => {
  it.scoped("answers / with 500 and a text naming npm run build, headers and all", () =>
    Effect.gen(function* () {
      const missing = NodePath.join(tmpdir(), "blctx-ui-page-not-built")
      const context = yield* Layer.build(
        UiServer.Default.pipe(
          Layer.provide(Layer.mergeAll(NodeUiListenerLive, Layer.succeed(UiAssetFolder, missing), NodeFileSystem.layer))
        )
      )
      const link = yield* Context.get(context, UiServer).open({})
      const opened = yield* get(link.port, new URL(link.url).pathname + new URL(link.url).search)
      expect(opened.status).toBe(303)
      const cookie = String(opened.headers["set-cookie"]?.[0]).split(";")[0] ?? ""
      const page = yield* get(link.port, "/", { cookie })
      expect(page.status).toBe(500)
      expect(page.body).toContain("npm run build")
      expect(page.body).toContain(missing)
      expect(page.headers).toMatchObject(SECURITY_HEADERS)
      expect((yield* get(link.port, "/assets/app.js", { cookie })).status).toBe(404)
    })
  )
})
