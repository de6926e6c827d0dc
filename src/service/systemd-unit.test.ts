import { describe, expect, it } from "@effect/vitest"
import type { InstallationId } from "../domain/installation-id.js"
import { resolvePaths } from "../paths/paths.js"
import { makeServiceSpec } from "./service-spec.js"
import { parseExecStart, parseUnit, quoteWord, renderUnit } from "./systemd-unit.js"

const spec = makeServiceSpec({
  installationId: "6f1f3c3e-8f5e-4a57-9d3b-4d1c2f0e9a11" as InstallationId,
  paths: resolvePaths({ home: "/home/a b" }),
  node: "/opt/node 20/bin/node",
  daemon: "/opt/blctx/dist/programs/daemon.js"
})

describe("renderUnit", () => {
  it("writes a notify unit with bounded start/stop, restart on failure, for the default target", () => {
    const unit = renderUnit(spec)
    for (const line of [
      "Type=notify",
      "NotifyAccess=all",
      "Restart=on-failure",
      "TimeoutStartSec=30",
      "TimeoutStopSec=5",
      "WantedBy=default.target"
    ]) {
      expect(unit.split("\n")).toContain(line)
    }
    expect(spec.name).toBe("blctxd-6f1f3c3e-8f5e-4a57-9d3b-4d1c2f0e9a11")
  })

  it("round-trips ExecStart words with spaces, quotes, percent and dollar signs", () => {
    const parsed = parseUnit(renderUnit(spec))
    expect(parsed?.execStart).toEqual(spec.command)
    expect(parsed?.environment).toEqual({ MALLOC_ARENA_MAX: "2", MALLOC_MMAP_THRESHOLD_: "65536" })
    expect(renderUnit(spec).split("\n")).toContain('Environment="MALLOC_ARENA_MAX=2"')
    expect(renderUnit(spec).split("\n")).toContain('Environment="MALLOC_MMAP_THRESHOLD_=65536"')
    const oddEnvironment = { ODD: 'a "b" 100% $HOME back\\slash', EMPTY: "" }
    expect(parseUnit(renderUnit({ ...spec, environment: oddEnvironment }))?.environment).toEqual(oddEnvironment)
    const odd = ['/a "quoted"', "100%", "$HOME", "back\\slash"]
    expect(parseExecStart(odd.map(quoteWord).join(" "))).toEqual(odd)
    expect(parsed?.restartOnFailure).toBe(true)
    expect(parsed?.timeoutStopSec).toBe(5)
  })
})
