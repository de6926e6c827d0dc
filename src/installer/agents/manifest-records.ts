import type { Manifest } from "../../ownership/manifest.js"
import type { RecordsKey } from "../../ownership/manifest-keys.js"

/** The manifest's fields, as the Manifest constructor takes them. */
export type ManifestFields = ConstructorParameters<typeof Manifest>[0]

/** The manifest keys that hold one agent's registrations of one kind (`codex_mcp`, `claude_hooks`). */
export type { RecordsKey }

/**
 * One agent's list of registrations of one kind, seen under neutral field names (`home`, `file`),
 * so one step serves every agent while each agent's manifest key keeps the field names it always
 * had (`codex_home`, `settings_file`): installation.json does not change.
 */
export interface RecordList<A> {
  readonly key: RecordsKey
  readonly read: (m: Manifest) => ReadonlyArray<A>
  /** The manifest's fields with this list replaced; an empty list leaves the key out. */
  readonly with: (fields: ManifestFields, records: ReadonlyArray<A>) => ManifestFields
}

const renamed = (record: object, names: Readonly<Record<string, string>>) =>
  Object.fromEntries(Object.entries(record).map(([name, value]) => [names[name] ?? name, value]))

/**
 * The list under `key`, with the neutral fields in `stored` kept under the names given there.
 * The casts only rename fields: reads come from a decoded manifest, and every write goes through
 * the Manifest constructor, which validates the stored shape.
 */
export const recordList = <A extends object>(
  key: RecordsKey,
  stored: Partial<Readonly<Record<keyof A & string, string>>>
): RecordList<A> => {
  const toStored = stored as Readonly<Record<string, string>>
  const toNeutral = Object.fromEntries(Object.entries(toStored).map(([neutral, name]) => [name, neutral]))
  return {
    key,
    read: (m) => ((m[key] ?? []) as ReadonlyArray<object>).map((r) => renamed(r, toNeutral) as A),
    with: (fields, records) => {
      const { [key]: _previous, ...rest } = fields
      return (
        records.length > 0 ? { ...rest, [key]: records.map((r) => renamed(r, toStored)) } : rest
      ) as ManifestFields
    }
  }
}
