import { describe, expect, it } from "vitest"
import { projectNamedBy, projectNameWords } from "./named-project.js"

describe("the project a question names", () => {
  it("reads a project's name from its directory's last segment", () => {
    expect([...projectNameWords("/home/dev/billing-service")]).toEqual(["billing", "service"])
    expect([...projectNameWords("/home/dev/Web_Dashboard/")]).toEqual(["web", "dashboard"])
    expect([...projectNameWords("/")]).toEqual([])
  })

  it("is the one directory whose name holds every word, else none", () => {
    const cwds = ["/home/dev/billing-service", "/home/dev/web-dashboard", "/home/dev/infra"]
    expect(projectNamedBy(["billing", "service"], cwds)).toBe("/home/dev/billing-service")
    expect(projectNamedBy(["dashboard"], cwds)).toBe("/home/dev/web-dashboard")
    // A word outside every name: the question is about something else.
    expect(projectNamedBy(["billing", "retries"], cwds)).toBeUndefined()
    expect(projectNamedBy([], cwds)).toBeUndefined()
    // Two directories answer: no guess.
    expect(projectNamedBy(["billing"], [...cwds, "/srv/billing-worker"])).toBeUndefined()
    // A directory's path above its last segment is not its name.
    expect(projectNamedBy(["dev"], cwds)).toBeUndefined()
  })

  it("reads past the words that ask what went on: worked on, changed, new, the project", () => {
    const cwds = ["/home/dev/billing-service", "/home/dev/change-log", "/home/dev/infra"]
    expect(projectNamedBy(["work", "billing", "service"], cwds)).toBe("/home/dev/billing-service")
    expect(projectNamedBy(["changed", "infra"], cwds)).toBe("/home/dev/infra")
    expect(projectNamedBy(["new", "billing", "project"], cwds)).toBe("/home/dev/billing-service")
    // Such a word alone names nothing, unless it is a name's own word.
    expect(projectNamedBy(["worked", "changed"], cwds)).toBeUndefined()
    expect(projectNamedBy(["change", "log"], cwds)).toBe("/home/dev/change-log")
    // Any other word still means the question is about something else.
    expect(projectNamedBy(["worked", "billing", "retries"], cwds)).toBeUndefined()
  })
})
