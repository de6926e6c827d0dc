import { Schema } from "effect"

/** `blctx explore` could not read what it was asked to (printed as JSON with `--json`). */
export class ExploreFailure extends Schema.TaggedError<ExploreFailure>()("ExploreFailure", {
  message: Schema.String,
  path: Schema.String,
  remediation: Schema.String
}) {}
