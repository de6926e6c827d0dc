import { el, show } from "./el.js"
import { renderForget } from "./forget-view.js"
import { renderHealth } from "./health-view.js"
import { renderNote } from "./note-view.js"
import { renderNotes } from "./notes-view.js"
import { forgetRoute, healthRoute, notesRoute, parseRoute, type Route, searchRoute, timelineRoute } from "./routes.js"
import { renderSearch } from "./search-view.js"
import { renderSession } from "./session-view.js"
import { renderTimeline } from "./timeline-view.js"

/**
 * The viewer's entry: a navigation bar and one view per hash route. After the first view has
 * rendered, `body[data-ready="1"]`; after each view, `body[data-view]` names it (tests and the
 * bench wait on these rather than on time).
 */

const NAV = [
  ["search", "Search", searchRoute()],
  ["timeline", "Timeline", timelineRoute()],
  ["notes", "Notes", notesRoute()],
  ["forget", "Forget", forgetRoute()],
  ["health", "Health", healthRoute()]
] as const

const navView = (current: Route["view"]) =>
  el(
    "nav",
    { class: "top" },
    el("strong", { class: "brand" }, "blctx"),
    NAV.map(([view, label, href]) =>
      el(
        "a",
        { href, ...(view === current || (view === "notes" && current === "note") ? { "aria-current": "page" } : {}) },
        label
      )
    )
  )

const renderView = (main: HTMLElement, route: Route): Promise<void> => {
  switch (route.view) {
    case "search":
      return renderSearch(main, route.params)
    case "session":
      return renderSession(main, route.id, route.params)
    case "timeline":
      return renderTimeline(main, route.params)
    case "notes":
      return renderNotes(main, route.params)
    case "note":
      return renderNote(main, route.id)
    case "forget":
      return renderForget(main, route.params)
    case "health":
      return renderHealth(main)
  }
}

const nav = el("header", {})
const main = el("main", {})
let rendering = 0

const render = async () => {
  const route = parseRoute(location.hash)
  const mine = ++rendering
  delete document.body.dataset.view
  show(nav, navView(route.view))
  await renderView(main, route)
  if (mine !== rendering) return
  document.body.dataset.view = route.view
  document.body.dataset.ready = "1"
}

show(document.body, nav, main)
window.addEventListener("hashchange", () => void render())
void render()
