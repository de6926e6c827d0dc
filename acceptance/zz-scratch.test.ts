import { it } from "vitest"
import { makeDaemonHome } from "./support/daemon-harness.js"
it("probe", async () => {
  const h = makeDaemonHome("detached")
  const install = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
  console.log("install", install.code)
  const q = `why ghp_0123456789abcdefghijABCDEFGHIJ012345 ${"lorem ".repeat(20000)}`.slice(0, 100_000)
  for (const args of [["search", q], ["search", q, "--json"], ["search", "x", "--limit", "5000"], ["status", "z".repeat(5000)], ["notes", "show", "q".repeat(5000)]]) {
    const r = await h.blctx(args)
    console.log(args[0], args.length, "code", r.code, "out", r.stdout.length, r.stdout.slice(0, 300), "err", r.stderr.length, r.stderr.slice(0, 600))
  }
  h.dispose()
}, 200_000)
