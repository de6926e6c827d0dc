import { describe, expect, it } from "@effect/vitest"
import { pathBeforeNpmExec } from "./npm-exec-path.js"

const gypBin = "/usr/lib/node_modules/npm/node_modules/@npmcli/run-script/lib/node-gyp-bin"
const person = "/home/me/.local/bin:/usr/local/bin:/usr/bin:/bin"
/** The PATH npm 11 gives `npx blctx` run in /home/me/project (its run-script's setPATH). */
const npxPath = [
  "/home/me/.npm/_npx/9649e86dfc1fd231/node_modules/.bin",
  "/home/me/project/node_modules/.bin",
  "/home/me/node_modules/.bin",
  "/home/node_modules/.bin",
  "/node_modules/.bin",
  gypBin,
  person
].join(":")

describe("pathBeforeNpmExec", () => {
  it("gives back the person's PATH without the folders npm exec put before it", () => {
    expect(pathBeforeNpmExec({ npm_command: "exec", PATH: npxPath })).toBe(person)
  })

  it("leaves PATH alone when npm exec did not start blctx", () => {
    expect(pathBeforeNpmExec({ PATH: person })).toBeUndefined()
    // An npm script that runs blctx asked for its project's bins on purpose.
    expect(pathBeforeNpmExec({ npm_command: "run-script", PATH: npxPath })).toBeUndefined()
  })

  it("leaves PATH alone when npm's folders are not where npm puts them", () => {
    expect(pathBeforeNpmExec({ npm_command: "exec", PATH: person })).toBeUndefined()
    expect(pathBeforeNpmExec({ npm_command: "exec" })).toBeUndefined()
  })

  it("keeps an empty PATH empty when the person had none", () => {
    expect(pathBeforeNpmExec({ npm_command: "exec", PATH: `/p/node_modules/.bin:${gypBin}:` })).toBe("")
  })
})
