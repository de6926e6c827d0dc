import { type ChangeObject, diffLines, diffWords } from "diff"
import { el, shown } from "./el.js"

/**
 * The difference between two texts as inserted and deleted runs (`ins`/`del` elements holding
 * text). Both sides are sanitized first, so an escape shown for a control character diffs as
 * the visible text it is. Words for notes of ordinary length; lines past that, which stays quick.
 */

const WORDS_UP_TO = 4_000

export const changesBetween = (before: string, after: string): Array<ChangeObject<string>> => {
  const a = shown(before)
  const b = shown(after)
  return a.length <= WORDS_UP_TO && b.length <= WORDS_UP_TO ? diffWords(a, b) : diffLines(a, b)
}

const part = (change: ChangeObject<string>) =>
  change.added
    ? el("ins", {}, change.value)
    : change.removed
      ? el("del", {}, change.value)
      : el("span", {}, change.value)

export const diffView = (before: string, after: string): HTMLElement =>
  el("pre", { class: "diff excerpt", "data-role": "diff" }, changesBetween(before, after).map(part))
