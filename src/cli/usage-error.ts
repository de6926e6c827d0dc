import { Schema } from "effect"

/** A command line blctx cannot run: unknown command, unknown step, bad flag combination (exit 2). */
export class CliUsageError extends Schema.TaggedError<CliUsageError>()("CliUsageError", {
  message: Schema.String
}) {}
