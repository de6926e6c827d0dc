import { Schema } from "effect"

/** `blctx explore` could not read what it was asked to (printed as JSON with `--json`). */
export class ExploreFailure extends Schema.TaggedError<ExploreFailure>()("ExploreFailure", {
  message: Schema.String,
  path: Schema.String,
  remediation: Schema.String
}) {}

/** The exit code of an explore stopped by SIGINT: 128 + the signal's number, as shells report it. */
export const INTERRUPTED_EXIT_CODE = 130

const describe = (defect: unknown): string => {
  if (defect instanceof Error) return `${defect.name}: ${defect.message}`
  return typeof defect === "string" ? defect : "unexpected error"
}

/**
 * Something blctx did not foresee went wrong while exploring: still a failure with a message
 * (one JSON document with `--json`), never a stack trace on stdout.
 */
export const unexpectedFailure = (path: string, defect: unknown) =>
  new ExploreFailure({
    message: `could not explore ${path === "" ? "the transcripts" : path}: ${describe(defect)}`,
    path,
    remediation:
      "This is a bug in blctx; please report it with this message. --view raw --start-line N shows a file's lines a page at a time."
  })
