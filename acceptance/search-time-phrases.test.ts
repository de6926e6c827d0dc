import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type DaemonHome, makeDaemonHome } from "./support/daemon-harness.js"

// How the daemon reads a question, through `blctx search`. "what did we do on billing last
// week?": it reads the date phrase in its own time zone (here UTC+14, so a UTC reading would be
// caught) against its clock, filters by it, ranks the other words and says in the answer what it
// did. "the client list": it searches the words' synonyms too, from the package's thesaurus.
// One home, read-only probes.

const ZONE = "Etc/GMT-14"
const OFFSET_MS = 14 * 3_600_000
const DAY_MS = 86_400_000

/** Midnight (in the zone) starting the Monday of the week `weeksBack` weeks before this one, as UTC ms. */
const mondayMidnight = (weeksBack: number) => {
  const local = new Date(Date.now() + OFFSET_MS)
  const sinceMonday = (local.getUTCDay() + 6) % 7
  const localMidnight = Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate())
  return localMidnight - sinceMonday * DAY_MS - weeksBack * 7 * DAY_MS - OFFSET_MS
}
/** Wednesday noon in the zone of the week `weeksBack` weeks ago. */
const wednesdayNoon = (weeksBack: number) => new Date(mondayMidnight(weeksBack) + 2 * DAY_MS + DAY_MS / 2)

const LAST_WEEK_ANSWER = "We moved the billing service invoice run to a nightly batch at 02:00."
const OLDER_ANSWER = "The billing service now retries Stripe webhooks twice before alerting."
const OTHER_WORDS_ANSWER = "The customers table renders only the visible rows with react-virtual."
/** Last week in the billing service, without its name: found because the question names the project. */
const UNNAMED_ANSWER = "Invoice PDFs now render from the HTML template with Playwright."

/** A Codex rollout of one turn at `at`. */
const rollout = (id: string, at: Date, prompt: string, answer: string) => {
  const t = (s: number) => new Date(at.getTime() + s * 1000).toISOString()
  return [
    {
      timestamp: t(0),
      type: "session_meta",
      payload: {
        id,
        timestamp: t(0),
        cwd: "/home/dev/billing-service",
        originator: "codex_cli_rs",
        cli_version: "0.120.0"
      }
    },
    { timestamp: t(1), type: "event_msg", payload: { type: "task_started", turn_id: `${id}-t1` } },
    { timestamp: t(2), type: "event_msg", payload: { type: "user_message", message: prompt, images: [] } },
    { timestamp: t(3), type: "event_msg", payload: { type: "agent_message", message: answer, phase: "final_answer" } },
    { timestamp: t(4), type: "event_msg", payload: { type: "task_complete", turn_id: `${id}-t1` } }
  ]
    .map((l) => JSON.stringify(l))
    .join("\n")
}

interface Search {
  query: string
  results: Array<{ text: string; timestamp: string }>
  synonyms_searched?: Array<string>
  project_named?: string
  time_filter?: {
    phrase: string
    applied: boolean
    since: string | null
    until: string | null
    time_zone: string
    searched: string
    note: string
  }
}

let home: DaemonHome
const blctx = (args: ReadonlyArray<string>) => home.blctx(args, { env: { TZ: ZONE } })
const search = async (args: ReadonlyArray<string>) => {
  const result = await blctx(["search", ...args, "--json"])
  expect(result.code, result.stderr + result.stdout).toBe(0)
  return JSON.parse(result.stdout) as Search
}

beforeAll(async () => {
  home = makeDaemonHome("detached")
  const install = await blctx(["install", "codex", "--step", "service_health", "--json"])
  expect(install.code, install.stdout + install.stderr).toBe(0)
  const dir = NodePath.join(home.codexHome, "sessions", "2026", "01", "01")
  Fs.mkdirSync(dir, { recursive: true })
  const files = [
    ["0199f000-0000-7000-8000-00000000000a", wednesdayNoon(1), "What did we change in billing?", LAST_WEEK_ANSWER],
    ["0199f000-0000-7000-8000-00000000000b", wednesdayNoon(5), "Any billing webhook changes?", OLDER_ANSWER],
    [
      "0199f000-0000-7000-8000-00000000000c",
      wednesdayNoon(3),
      "Make the big table scroll smoothly",
      OTHER_WORDS_ANSWER
    ],
    ["0199f000-0000-7000-8000-00000000000d", wednesdayNoon(1), "Finance wants invoices as PDFs", UNNAMED_ANSWER]
  ].map(([id, at, prompt, answer]) => {
    const file = NodePath.join(dir, `rollout-2026-01-01T00-00-00-${id}.jsonl`)
    Fs.writeFileSync(file, `${rollout(id as string, at as Date, prompt as string, answer as string)}\n`)
    return file
  })
  const indexed = await blctx(["index", ...files, "--wait", "--json"])
  expect(indexed.code, indexed.stdout + indexed.stderr).toBe(0)
}, 120_000)
afterAll(() => home?.dispose())

describe("date phrases in blctx search", () => {
  it("read last week in the daemon's zone, filter by it, and say so", async () => {
    const [found, pretty] = await Promise.all([
      search(["what", "did", "we", "do", "on", "billing", "last", "week?"]),
      blctx(["search", "what did we do on billing last week?", "--pretty"])
    ])
    expect(found.results.map((r) => r.text)).toContain(LAST_WEEK_ANSWER)
    expect(found.results.map((r) => r.text)).not.toContain(OLDER_ANSWER)
    // "billing" is all the question says besides the time, and it names the project: the
    // project's turns of last week come first, their final answers first, named or not.
    expect(found.project_named).toBe("/home/dev/billing-service")
    expect(found.results.slice(0, 2).map((r) => r.text)).toEqual(
      expect.arrayContaining([LAST_WEEK_ANSWER, UNNAMED_ANSWER])
    )
    expect(found.query).toBe("what did we do on billing last week?")
    expect(found.time_filter).toMatchObject({
      phrase: "last week",
      applied: true,
      since: new Date(mondayMidnight(1)).toISOString(),
      until: new Date(mondayMidnight(0)).toISOString(),
      time_zone: ZONE,
      searched: "what did we do on billing?"
    })
    expect(pretty.code, pretty.stderr).toBe(0)
    expect(pretty.stdout).toContain(`"last week" read as a time filter`)
    expect(pretty.stdout).toContain("Asked about the project /home/dev/billing-service")
  })

  it("let explicit --since win, and leave a quoted phrase as words", async () => {
    const since = new Date(mondayMidnight(8)).toISOString()
    const [explicit, quoted] = await Promise.all([
      search(["billing", "last", "week", "--since", since]),
      search(['billing "last week"'])
    ])
    expect(explicit.time_filter).toMatchObject({ phrase: "last week", applied: false })
    expect(explicit.results.map((r) => r.text)).toEqual(expect.arrayContaining([LAST_WEEK_ANSWER, OLDER_ANSWER]))
    expect(quoted.time_filter).toBeUndefined()
  })
})

describe("a question in other words", () => {
  it("finds the turn through the package's thesaurus: a client list is the customers table", async () => {
    const [found, pretty] = await Promise.all([
      search(["how", "did", "we", "speed", "up", "the", "client", "list?"]),
      blctx(["search", "how did we speed up the client list?", "--pretty"])
    ])
    expect(found.results.map((r) => r.text)).toContain(OTHER_WORDS_ANSWER)
    // The answer says which synonyms it searched, so a result without the question's words is explained.
    expect(found.synonyms_searched).toContain("customer")
    expect(pretty.code, pretty.stderr).toBe(0)
    expect(pretty.stdout).toMatch(/Also searched, as synonyms: .*customer/)
  })
})
