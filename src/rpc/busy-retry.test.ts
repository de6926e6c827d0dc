import { describe, expect, it } from "vitest"
import { BUSY_RETRY, busyPauseMs } from "./busy-retry.js"

describe("busyPauseMs", () => {
  it("grows by the factor, spread from 0.8 to 1.2 times, and never past the cap", () => {
    expect(busyPauseMs(0, () => 0)).toBeCloseTo(BUSY_RETRY.firstPauseMs * 0.8)
    expect(busyPauseMs(0, () => 1)).toBeCloseTo(BUSY_RETRY.firstPauseMs * 1.2)
    expect(busyPauseMs(2, () => 0.5)).toBeCloseTo(BUSY_RETRY.firstPauseMs * BUSY_RETRY.factor ** 2)
    expect(busyPauseMs(30, () => 1)).toBe(BUSY_RETRY.maxPauseMs)
  })
})
