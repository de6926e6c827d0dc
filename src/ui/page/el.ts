import { sanitizeForTerminal } from "../../terminal/sanitize.js"
import type { HashRoute } from "./routes.js"

/**
 * The page's only way to make DOM: elements from a fixed set of tags, attributes from a fixed
 * allowlist, and text as text nodes. Nothing here parses HTML, so text from history (a
 * transcript holding `<script>` or `onerror=`) can only ever be characters on the screen. Every
 * string is passed through the terminal sanitizer first: controls and bidi overrides show as
 * visible escapes instead of reordering what a person reads.
 */

const TAGS = [
  "a",
  "button",
  "code",
  "dd",
  "del",
  "details",
  "div",
  "dl",
  "dt",
  "em",
  "footer",
  "form",
  "h1",
  "h2",
  "h3",
  "header",
  "input",
  "ins",
  "label",
  "li",
  "main",
  "mark",
  "nav",
  "ol",
  "option",
  "p",
  "pre",
  "section",
  "select",
  "small",
  "span",
  "strong",
  "summary",
  "table",
  "tbody",
  "td",
  "textarea",
  "th",
  "thead",
  "time",
  "tr",
  "ul"
] as const
export type Tag = (typeof TAGS)[number]

/** Attributes a view may set; `href` only as a route built by `routes.ts`. */
export interface Attrs {
  readonly class?: string
  readonly id?: string
  readonly type?: "button" | "submit" | "text" | "search" | "date" | "datetime-local" | "number" | "checkbox"
  readonly name?: string
  readonly value?: string
  readonly placeholder?: string
  readonly for?: string
  readonly title?: string
  readonly href?: HashRoute
  readonly disabled?: boolean
  readonly checked?: boolean
  readonly selected?: boolean
  readonly rows?: number
  readonly min?: number
  readonly max?: number
  readonly role?: string
  readonly "aria-label"?: string
  readonly "aria-current"?: string
  readonly "data-role"?: string
  readonly "data-turn"?: string
  readonly "data-anchor"?: string
  readonly "data-kind"?: string
  readonly open?: boolean
  readonly on?: { readonly [E in keyof HTMLElementEventMap]?: (event: HTMLElementEventMap[E]) => void }
}

export type Child = Node | string | number | null | undefined | false | ReadonlyArray<Child>

const ALLOWED_TAGS: ReadonlySet<string> = new Set(TAGS)
const BOOLEAN_ATTRS = new Set(["disabled", "checked", "selected", "open"])
const STRING_ATTRS = new Set([
  "class",
  "id",
  "type",
  "name",
  "placeholder",
  "for",
  "title",
  "rows",
  "min",
  "max",
  "role",
  "aria-label",
  "aria-current",
  "data-role",
  "data-turn",
  "data-anchor",
  "data-kind"
])

/** An internal route: `#/` then only URL-safe characters (ids are percent-encoded), so never a scheme. */
const INTERNAL_ROUTE = /^#\/[A-Za-z0-9\-._~%/?=&!*'()]*$/

/** Text as a person should see it: controls and bidi overrides as visible escapes. */
export const shown = (text: string): string => sanitizeForTerminal(text)

/** A text node of sanitized text: the one way strings reach the document. */
export const text = (value: string | number): Text => document.createTextNode(shown(String(value)))

const setAttribute = (node: HTMLElement, name: string, value: unknown) => {
  if (value === undefined || value === false) return
  if (name === "href") {
    if (typeof value !== "string" || !INTERNAL_ROUTE.test(value))
      throw new Error(`refused href ${shown(String(value))}`)
    node.setAttribute("href", value)
  } else if (name === "value") {
    // A form control's value is data, never markup; set as the property so it is the live value.
    ;(node as HTMLInputElement).value = String(value)
  } else if (BOOLEAN_ATTRS.has(name)) {
    node.setAttribute(name, "")
  } else if (STRING_ATTRS.has(name)) {
    node.setAttribute(name, shown(String(value)))
  } else throw new Error(`attribute ${name} is not on the page's allowlist`)
}

const append = (node: Node, child: Child) => {
  if (child === null || child === undefined || child === false) return
  if (typeof child === "string" || typeof child === "number") node.appendChild(text(child))
  else if (Array.isArray(child)) for (const c of child as ReadonlyArray<Child>) append(node, c)
  else node.appendChild(child as Node)
}

/** One element: an allowed tag, allowed attributes, listeners, and children as nodes or text. */
export const el = <K extends Tag>(
  tag: K,
  attrs: Attrs = {},
  ...children: ReadonlyArray<Child>
): HTMLElementTagNameMap[K] => {
  if (!ALLOWED_TAGS.has(tag)) throw new Error(`tag ${tag} is not on the page's allowlist`)
  const node = document.createElement(tag)
  for (const [name, value] of Object.entries(attrs)) {
    if (name === "on") {
      for (const [event, listener] of Object.entries(value as Record<string, EventListener>))
        node.addEventListener(event, listener)
    } else setAttribute(node, name, value)
  }
  append(node, children)
  return node
}

/** Replaces what a container shows. */
export const show = (container: Element, ...children: ReadonlyArray<Child>) => {
  container.replaceChildren()
  append(container, children)
}
