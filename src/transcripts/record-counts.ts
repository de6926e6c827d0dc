import type { TranscriptRecord } from "./record.js"
import type { ClassifierCounts, makeTurnTracker } from "./turn-tracker.js"

type TurnTracker = ReturnType<typeof makeTurnTracker>
type ParseError = Extract<TranscriptRecord, { readonly kind: "parse_error" }>

const increment = (counts: Record<string, number>, key: string) => {
  counts[key] = (counts[key] ?? 0) + 1
}

/**
 * The tallies every classifier keeps as records pass, whatever the format: unreadable lines,
 * records by type, and the types and fields it does not know (so a format change shows).
 */
export const makeRecordCounts = () => {
  const byType: Record<string, number> = {}
  const unknownTypes: Record<string, number> = {}
  const unknownFields: Record<string, number> = {}
  let parseErrors = 0
  return {
    /** A line that is not a record: counted, and given to the tracker as unreadable. */
    unreadable: (tracker: Pick<TurnTracker, "unreadable">, line: ParseError) => {
      parseErrors++
      increment(byType, "parse_error")
      tracker.unreadable(line, line.reason)
    },
    record: (recordType: string, type: string, knownTypes: ReadonlySet<string>) => {
      increment(byType, recordType)
      if (!knownTypes.has(type)) increment(unknownTypes, type)
    },
    fields: (entry: object, knownFields: ReadonlySet<string>) => {
      for (const key of Object.keys(entry)) if (!knownFields.has(key)) increment(unknownFields, key)
    },
    counts: (): ClassifierCounts => ({ parseErrors, byType, unknownTypes, unknownFields })
  }
}
