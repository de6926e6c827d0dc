import { defineConfig } from "vitest/config"

// Unit tests sit beside their modules; acceptance tests run the built programs as subprocesses.
export default defineConfig({
  test: {
    // The forks pool reads this from the root, not from a project: without it each unit file got a
    // fresh process whatever the unit project says. Each project still decides whether its files
    // share one module graph (unit: yes; acceptance: reset for each file, as before).
    poolOptions: { forks: { isolate: false } },
    // Two files at a time (vitest's default on two cores is one). Acceptance files spend most of
    // their time waiting on the subprocesses they start (agents, daemons, CLI calls), so two share
    // the cores well; each has its own homes, sockets and loopback ports, so none sees another's.
    maxWorkers: 2,
    minWorkers: 1,
    projects: [
      {
        test: {
          name: "unit",
          include: [
            "src/**/*.test.ts",
            "layers/**/*.test.ts",
            "programs/**/*.test.ts",
            "testing/**/*.test.ts",
            "bench/**/*.test.ts"
          ],
          // One module graph per worker, not per file: reloading Effect and the modules for each
          // of ~320 files was most of the run. Safe because no unit file leaves a global changed
          // (none mocks modules or fakes timers; the one that sets process.env restores it), and
          // the setup file fails any file that leaves process.env or the working directory changed.
          isolate: false,
          setupFiles: ["./vitest.unit-setup.ts"],
          testTimeout: 30_000
        }
      },
      {
        test: {
          name: "acceptance",
          include: ["acceptance/**/*.test.ts"],
          testTimeout: 120_000,
          hookTimeout: 60_000
        }
      }
    ]
  }
})
