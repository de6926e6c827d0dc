import {
  type ForgetPreviewResponse,
  type ForgetResponse,
  type ForgetSelector,
  SELECTOR_KINDS,
  type SelectorKind,
  type SourceCounts
} from "../../forget/forget-contract.js"
import { plural, sourceCountParts } from "../../forget/forget-counts-text.js"
import { call } from "./daemon-client.js"
import { el, show } from "./el.js"
import { failureView } from "./failure.js"
import { sourceLabel } from "./provenance.js"
import { forgetRoute, type Params } from "./routes.js"

/**
 * Forgetting, as `blctx forget` does it: name exactly one thing, see the preview (counts by
 * source, the first items with their citations, what the counts mean), and only then confirm
 * with the preview's token. Nothing is removed without that second, explicit step.
 */

const LABELS: Record<SelectorKind, string> = {
  note: "a note (id)",
  context_session: "a blctx session (id)",
  file: "a transcript file (absolute path)",
  session: "an agent session (id)",
  project: "a project (absolute directory)",
  time_range: "a time range"
}

/** The selector the route names: the first kind given, or a time range from since/until. */
export const selectorOf = (params: Params): ForgetSelector | undefined => {
  for (const kind of SELECTOR_KINDS) {
    if (kind === "time_range") continue
    const value = params[kind]
    if (value !== undefined && value !== "") return { [kind]: value } as ForgetSelector
  }
  const range = {
    ...(params.since ? { since: params.since } : {}),
    ...(params.until ? { until: params.until } : {})
  }
  return Object.keys(range).length > 0 ? (range as ForgetSelector) : undefined
}

const selectorForm = (params: Params) => {
  const current = SELECTOR_KINDS.find((k) => k !== "time_range" && params[k]) ?? "session"
  const kind = el(
    "select",
    { name: "kind", "aria-label": "what to forget" },
    SELECTOR_KINDS.filter((k) => k !== "time_range").map((k) =>
      el("option", { value: k, selected: k === current }, LABELS[k])
    )
  )
  const value = el("input", { type: "text", name: "value", value: params[current] ?? "", "aria-label": "which" })
  const since = el("input", { type: "text", name: "since", value: params.since ?? "", placeholder: "since" })
  const until = el("input", { type: "text", name: "until", value: params.until ?? "", placeholder: "until" })
  return el(
    "form",
    {
      class: "forget-form",
      on: {
        submit: (event) => {
          event.preventDefault()
          const chosen = value.value.trim()
          location.hash =
            chosen !== ""
              ? forgetRoute({ [kind.value]: chosen })
              : forgetRoute({ since: since.value.trim(), until: until.value.trim() })
        }
      }
    },
    el("label", {}, "Forget ", kind, " ", value),
    el("p", {}, el("small", {}, "or a time range (leave the field above empty): "), since, " ", until),
    el("button", { type: "submit" }, "Preview")
  )
}

const countsLine = (source: string, n: SourceCounts) =>
  el("li", {}, el("strong", {}, source), `: ${sourceCountParts(n).join(", ")}`)

export const previewView = (preview: ForgetPreviewResponse): HTMLElement => {
  const c = preview.counts
  return el(
    "section",
    { class: "preview", "data-role": "forget-preview" },
    el("h2", {}, `Would forget ${plural(c.messages, "message")}:`),
    el(
      "ul",
      {},
      Object.entries(c.by_source).map(([source, n]) => countsLine(source, n)),
      c.capture_bindings + c.capture_events > 0
        ? el("li", {}, `capture: ${plural(c.capture_bindings, "binding")}, ${plural(c.capture_events, "event")}`)
        : null
    ),
    preview.items.length === 0
      ? null
      : el(
          "div",
          {},
          el("h3", {}, preview.items.length < c.messages ? `First ${preview.items.length}:` : "Items:"),
          el(
            "ol",
            { class: "hits" },
            preview.items.map((item) =>
              el(
                "li",
                { class: "hit" },
                el("small", {}, `${sourceLabel(item.source)}  ${item.timestamp ?? "time unknown"}`),
                el("pre", { class: "excerpt" }, item.excerpt.replace(/\s+/g, " "))
              )
            )
          )
        ),
    preview.notes.map((n) => el("p", { class: "note" }, el("small", {}, n)))
  )
}

const forgottenView = (forgotten: ForgetResponse) =>
  el(
    "section",
    { class: "forgotten", "data-role": "forgotten" },
    el(
      "p",
      {},
      `Forgot ${plural(forgotten.counts.messages, "message")} (tombstone ${forgotten.tombstone_id}, ${forgotten.forgotten_at}).`
    ),
    el(
      "p",
      {},
      forgotten.scrubbed
        ? "The database and its WAL were rewritten: nothing of the forgotten text remains in them."
        : "The database will be rewritten shortly (the daemon retries the scrub)."
    )
  )

const confirmArea = (selector: ForgetSelector, preview: ForgetPreviewResponse, area: HTMLElement) => {
  const c = preview.counts
  if (c.messages + c.capture_bindings + c.capture_events === 0)
    return el("p", {}, "Nothing matches: nothing to forget.")
  const button = el("button", { type: "button", class: "danger", "data-role": "confirm-forget" }, "Forget all of this")
  button.addEventListener("click", async () => {
    button.disabled = true
    show(area, "Forgetting…")
    try {
      const forgotten = await call((client) => client.Forget({ selector, token: preview.token }))
      show(area, forgottenView(forgotten))
    } catch (error) {
      show(area, failureView(error))
    }
  })
  return el(
    "div",
    { class: "confirm" },
    el("p", {}, `It cannot be undone. This preview's confirmation expires at ${preview.expires_at}.`),
    button
  )
}

export const renderForget = async (root: HTMLElement, params: Params): Promise<void> => {
  const body = el("div", {})
  show(root, el("h1", {}, "Forget"), selectorForm(params), body)
  const selector = selectorOf(params)
  if (selector === undefined) return
  show(body, el("p", { class: "loading" }, "Previewing…"))
  try {
    const preview = await call((c) => c.ForgetPreview({ selector }))
    const area = el("div", {})
    show(body, previewView(preview), area)
    show(area, confirmArea(selector, preview, area))
  } catch (error) {
    show(body, failureView(error))
  }
}
