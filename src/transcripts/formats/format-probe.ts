import * as NodePath from "node:path"
import type { FormatProbe, SessionHeader } from "./transcript-format.js"

/**
 * What the formats' detection and headers share. A file is a format's when its name matches the
 * format's pattern or its first bytes start one of its records; the head is matched as text, on
 * its first characters alone, since a first line can be megabytes long and is never parsed here.
 */

/** Enough of a head to hold a record's start, after any leading blank lines. */
export const HEAD_CHARS = 4096

/** The first `chars` characters of a probed head (bytes decoded leniently: a head may end mid-character). */
export const headText = (head: FormatProbe["head"], chars: number): string =>
  typeof head === "string"
    ? head.slice(0, chars)
    : new TextDecoder("utf-8", { fatal: false }).decode(head.subarray(0, chars))

/** Whether the probed file is named like `fileName`, or its head's first `chars` characters start like `firstRecord`. */
export const namedOrStarting = (
  probe: FormatProbe,
  fileName: RegExp,
  firstRecord: RegExp,
  chars: number = HEAD_CHARS
): boolean => fileName.test(NodePath.basename(probe.path)) || firstRecord.test(headText(probe.head, chars))

/** The header of a session whose first record names neither its id nor its directory. */
export const NO_HEADER: SessionHeader = { session_id: null, cwd: null }
