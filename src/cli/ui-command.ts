import { spawn } from "node:child_process"
import { Command, Options } from "@effect/cli"
import { Effect, Schema } from "effect"
import type { plainStyle } from "../installer/render-text.js"
import { OpenUiRequest, OpenUiResponse } from "../rpc/open-ui-contract.js"
import { commandDescription } from "./help.js"
import { emit, handled, withDaemon } from "./history-commands.js"
import { requestOptions } from "./request-options.js"

const noOpen = Options.boolean("no-open").pipe(Options.withDescription("Print the link without opening a browser."))

const pretty = Options.boolean("pretty").pipe(
  Options.withDescription("Print the link and until when it works, for a person (the default on a terminal).")
)

const encodeLink = Schema.encodeSync(OpenUiResponse)

const renderLink = (link: OpenUiResponse, style: typeof plainStyle) =>
  [
    style.bold(link.url),
    `Open it once, within ten minutes (until ${link.expires_at}). The page is served until blctxd stops (it stops with it); run blctx ui again for a new link.`
  ].join("\n")

/**
 * Opens the link in the person's browser, detached: the command does not wait for the browser,
 * and a machine without one (or without xdg-open) is not an error; the link is printed anyway.
 */
const openBrowser = (url: string) =>
  Effect.sync(() => {
    const opener = process.platform === "darwin" ? "open" : "xdg-open"
    try {
      const child = spawn(opener, [url], { detached: true, stdio: "ignore" })
      child.on("error", () => undefined)
      child.unref()
    } catch {
      // No opener here: the printed link is enough.
    }
  })

/** `blctx ui`: the daemon's viewer, a private page on 127.0.0.1, through a one-time link. */
export const uiCommand = Command.make(
  "ui",
  { request: requestOptions(OpenUiRequest, { port: {} }), noOpen, pretty },
  (o) =>
    handled(
      Effect.gen(function* () {
        const link = yield* withDaemon((client) => client.OpenUi(o.request))
        yield* emit(link, encodeLink, renderLink, o.pretty)
        if (!o.noOpen) yield* openBrowser(link.url)
      }),
      o.pretty
    )
).pipe(
  Command.withDescription(
    commandDescription(
      "Open your history in a private page served on this machine",
      "Search, read, curate and forget your history in a browser. The daemon serves the page on 127.0.0.1 only (it is started when needed) until it stops. Prints a one-time link, valid ten minutes and used once, and opens it in the browser. Prints JSON (url, port, expires_at) unless --pretty or on a terminal."
    )
  )
)
