import { defineConfig } from "vitest/config"

// Unit tests sit beside their modules; acceptance tests run the built programs as subprocesses.
export default defineConfig({
  test: {
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
