import { readFileSync } from "node:fs"
import { expect, it } from "@effect/vitest"
import { VERSION } from "./version.js"

it("VERSION equals package.json's version", () => {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
  expect(VERSION).toBe(pkg.version)
})
