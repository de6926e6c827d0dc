import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import type { InstallationId } from "../domain/installation-id.js"
import { LAUNCHD_UMASK, launchdLabel, parsePlist, readLaunchAgent, renderPlist } from "./launchd-plist.js"
import type { ServiceSpec } from "./service-spec.js"

const id = "00000000-0000-4000-8000-000000000002" as InstallationId
const spec: ServiceSpec = {
  installationId: id,
  name: `blctxd-${id}`,
  command: ["/usr/local/bin/node", "--optimize-for-size", "/Users/a & b/<blctx>/daemon.js", "--installation-id", id],
  environment: { MALLOC_ARENA_MAX: "2" },
  daemonEntry: "/Users/a & b/<blctx>/daemon.js",
  socketPath: "/Users/a/.local/state/blctx/blctxd.sock",
  stateDir: "/Users/a/.local/state/blctx",
  configDir: "/Users/a/.config/blctx",
  pidFile: "/Users/a/.local/state/blctx/blctxd.pid",
  logFile: "/Users/a/.local/state/blctx/blctxd.log"
}

const HEADER =
  '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n'
const plist = (body: string) => `${HEADER}<plist version="1.0">\n${body}\n</plist>\n`

describe("the LaunchAgent plist", () => {
  it("reads back as the agent launchd would run: the exact command, restarted on failure, logging to the state directory", () => {
    const agent = readLaunchAgent(renderPlist(spec))
    expect(agent).toEqual(
      Either.right({
        label: launchdLabel(spec),
        programArguments: spec.command,
        runAtLoad: true,
        restartOnFailure: true,
        logFile: spec.logFile
      })
    )
    const parsed = parsePlist(renderPlist(spec))
    expect(Either.getOrThrow(parsed)).toMatchObject({
      Umask: LAUNCHD_UMASK,
      ProcessType: "Background",
      ThrottleInterval: 1,
      EnvironmentVariables: { MALLOC_ARENA_MAX: "2" }
    })
    expect(launchdLabel(spec)).toBe(`dev.blctx.blctxd-${id}`)
  })

  it("escapes XML in paths, so a path with & or < cannot break the file", () => {
    expect(renderPlist(spec)).toContain("/Users/a &amp; b/&lt;blctx&gt;/daemon.js")
  })

  it("refuses what plutil -lint refuses, saying what is wrong", () => {
    const refused = (text: string) => Either.getLeft(parsePlist(text))._tag === "Some"
    expect(refused("<plist><dict/></plist>")).toBe(true)
    expect(refused(plist("<dict><key>A</key><string>x</string><key>A</key><true/></dict>"))).toBe(true)
    expect(refused(plist("<dict><key>A</key><string>x</string>"))).toBe(true)
    expect(refused(plist("<dict><key>N</key><integer>12x</integer></dict>"))).toBe(true)
    expect(refused(plist("<dict><string>no key</string></dict>"))).toBe(true)
    expect(refused(plist("<dict/><dict/>"))).toBe(true)
    expect(
      parsePlist(plist("<dict><key>A</key><array><string>x</string><integer>-3</integer><false/></array></dict>"))
    ).toEqual(Either.right({ A: ["x", -3, false] }))
    expect(Either.getLeft(readLaunchAgent(plist("<dict><key>Label</key><string>x</string></dict>")))).toEqual(
      Either.getLeft(Either.left("ProgramArguments is missing or not an array of strings"))
    )
  })
})
