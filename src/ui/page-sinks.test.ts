import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { htmlSinksIn } from "./page-sinks.test-support.js"

const pageDir = NodePath.join(NodePath.dirname(fileURLToPath(import.meta.url)), "page")

describe("the viewer's page", () => {
  it("parses nothing as markup or code: no innerHTML, outerHTML, insertAdjacentHTML, document.write or eval", () => {
    expect(htmlSinksIn(pageDir)).toEqual([])
  })

  it("the scan finds each sink it names", () => {
    const dir = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "blctx-sinks-"))
    try {
      const lines = [
        "node.innerHTML = text",
        "node.outerHTML = text",
        'node.insertAdjacentHTML("beforeend", text)',
        "document.write(text)",
        "eval(text)",
        'new Function("return 1")',
        'node.setAttribute("onclick", text)',
        "const ok = evaluate(text)"
      ]
      Fs.writeFileSync(NodePath.join(dir, "view.ts"), lines.join("\n"))
      expect(htmlSinksIn(dir).map((f) => f.replace(/^.*view\.ts:/, ""))).toEqual(
        lines.slice(0, 7).map((line, i) => `${i + 1}: ${line}`)
      )
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
