import { shown } from "./el.js"

/**
 * A bar chart as inline SVG, built with createElementNS (no library, no markup parsed): one bar
 * per day, scaled to the largest value, each bar titled with its day and value so hovering
 * reads it exactly. Labels are sanitized text nodes like everything else on the page.
 */

const SVG = "http://www.w3.org/2000/svg"
const SVG_TAGS = new Set(["svg", "g", "rect", "text", "title", "line"])

const svg = (tag: string, attrs: Record<string, string | number>, ...children: ReadonlyArray<Node | string>) => {
  if (!SVG_TAGS.has(tag)) throw new Error(`svg tag ${tag} is not on the page's allowlist`)
  const node = document.createElementNS(SVG, tag)
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v))
  for (const c of children) node.appendChild(typeof c === "string" ? document.createTextNode(shown(c)) : c)
  return node
}

export interface Bar {
  readonly label: string
  readonly value: number
}

const WIDTH = 720
const HEIGHT = 140
const AXIS = 18

/** Bar heights for values: the largest fills the plot; a zero draws nothing, a small value at least 1 px. */
export const barHeights = (values: ReadonlyArray<number>, plot: number): Array<number> => {
  const max = Math.max(0, ...values)
  return values.map((v) => (max === 0 || v <= 0 ? 0 : Math.max(1, Math.round((v / max) * plot))))
}

export const barChart = (title: string, bars: ReadonlyArray<Bar>): SVGSVGElement => {
  const plot = HEIGHT - AXIS
  const step = bars.length === 0 ? WIDTH : WIDTH / bars.length
  const heights = barHeights(
    bars.map((b) => b.value),
    plot - 4
  )
  const max = Math.max(0, ...bars.map((b) => b.value))
  const chart = svg(
    "svg",
    { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: "chart", role: "img", "aria-label": title },
    svg("title", {}, `${title}: largest ${max}`),
    svg("line", { x1: 0, y1: plot, x2: WIDTH, y2: plot, class: "axis" }),
    svg("text", { x: 2, y: 12, class: "chart-label" }, `${title} (max ${max} a day)`)
  )
  bars.forEach((bar, i) => {
    const h = heights[i] ?? 0
    chart.appendChild(
      svg(
        "rect",
        { x: i * step + 1, y: plot - h, width: Math.max(1, step - 2), height: h, class: "bar" },
        svg("title", {}, `${bar.label}: ${bar.value}`)
      )
    )
  })
  const first = bars[0]
  const last = bars.at(-1)
  if (first !== undefined) chart.appendChild(svg("text", { x: 2, y: HEIGHT - 4, class: "chart-label" }, first.label))
  if (last !== undefined && bars.length > 1)
    chart.appendChild(svg("text", { x: WIDTH - 2, y: HEIGHT - 4, class: "chart-label end" }, last.label))
  return chart as SVGSVGElement
}
