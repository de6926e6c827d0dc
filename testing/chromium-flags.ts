/**
 * How tests and benchmarks start Debian's chromium headless: no sandbox (these runs are root in a
 * container) and nothing fetched behind their back (this machine's network is closed).
 */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]

/** The chromium to drive: `BLCTX_CHROMIUM`, or Debian's. */
export const chromiumPath = (): string => process.env.BLCTX_CHROMIUM ?? "/usr/bin/chromium"
