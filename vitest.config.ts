import { defineConfig } from "vitest/config"

// Unit tests sit beside their modules; acceptance tests run the built programs as subprocesses.
const RUN_ALONE = ["acceptance/frozen-daemon.test.ts", "acceptance/codex-capture.test.ts"]
const ACCEPTANCE_BOUNDS = { testTimeout: 120_000, hookTimeout: 60_000 }

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
          sequence: { groupOrder: 0 },
          setupFiles: ["./vitest.unit-setup.ts"],
          testTimeout: 30_000
        }
      },
      {
        test: {
          name: "acceptance",
          include: ["acceptance/**/*.test.ts"],
          exclude: RUN_ALONE,
          sequence: { groupOrder: 1 },
          ...ACCEPTANCE_BOUNDS
        }
      },
      {
        // Files that hold a wall-clock bound the product promises (a frozen daemon's 5 s call
        // deadline, a hook's 1 s stdin deadline under hundreds of concurrent hooks): run one at a
        // time, after the others, so no other file shares the cores while they measure.
        test: {
          name: "acceptance-alone",
          include: RUN_ALONE,
          poolOptions: { forks: { singleFork: true, isolate: true } },
          sequence: { groupOrder: 2 },
          ...ACCEPTANCE_BOUNDS
        }
      }
    ]
  }
})
