import { Schema } from "effect"
import { boundedNumber } from "../domain/read-bounds-schema.js"

/** `OpenUi`'s request: the port to listen on; absent or 0 lets the system choose one. */
export const OpenUiRequest = Schema.Struct({
  port: Schema.optional(
    boundedNumber(
      { min: 0, max: 65535 },
      "The port on 127.0.0.1 the viewer listens on, when it is not running yet; 0 or none lets the system choose one."
    )
  )
})

/** A one-time link to the viewer, the port it is served on, and when the link stops working. */
export class OpenUiResponse extends Schema.Class<OpenUiResponse>("OpenUiResponse")({
  url: Schema.String,
  port: Schema.Int,
  expires_at: Schema.String
}) {}

/**
 * The viewer already listens on another port for the rest of this daemon's life: one page per
 * daemon, so there is one set of sessions to guard.
 */
export class UiAlreadyServing extends Schema.TaggedError<UiAlreadyServing>()("UiAlreadyServing", {
  url: Schema.String,
  port: Schema.Int,
  requested_port: Schema.Int,
  remediation: Schema.String
}) {
  override get message() {
    return `the viewer already runs at ${this.url}, not on port ${this.requested_port}. ${this.remediation}`
  }
}

/** The daemon could not listen on the port asked for (in use, or not allowed). */
export class UiListenFailed extends Schema.TaggedError<UiListenFailed>()("UiListenFailed", {
  port: Schema.Int,
  reason: Schema.String,
  remediation: Schema.String
}) {
  override get message() {
    return `the viewer cannot listen on 127.0.0.1:${this.port}: ${this.reason}. ${this.remediation}`
  }
}
