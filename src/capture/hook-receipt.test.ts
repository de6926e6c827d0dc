import { describe, expect, it } from "vitest"
import { RECEIPT_REASONS, receiptLine } from "./hook-receipt.js"

describe("receipt", () => {
  it("is one line: event, outcome, reason", () => {
    expect(receiptLine("Stop", "captured")).toBe("blctx-hook: Stop captured captured")
    expect(receiptLine("UserPromptSubmit", "recall_timeout")).toBe(
      "blctx-hook: UserPromptSubmit captured recall_timeout"
    )
    expect(receiptLine("Stop", "stale_generation")).toBe("blctx-hook: Stop skipped stale_generation")
    expect(receiptLine("SessionEnd", "spool_failed")).toBe("blctx-hook: SessionEnd failed spool_failed")
  })

  it("never repeats argv's text unless it is a known event", () => {
    expect(receiptLine("Stop\nforged line", "bad_arguments")).toBe("blctx-hook: unknown failed bad_arguments")
    expect(receiptLine("", "bad_arguments")).toBe("blctx-hook: unknown failed bad_arguments")
  })

  it("reasons are single words", () => {
    for (const reason of RECEIPT_REASONS) expect(reason).toMatch(/^[a-z_]+$/)
  })
})
