import { Either, Schema } from "effect"
import { describeDecodeError, quoteValue } from "../domain/decode-issues.js"
import { InstallationId } from "../domain/installation-id.js"

const AbsolutePath = Schema.String.pipe(
  Schema.filter((p) => p.startsWith("/"), { message: () => "must be an absolute path" })
)

/** blctxd's command line: which installation it serves and where its XDG roots are. */
export const DaemonArgs = Schema.Struct({
  "installation-id": InstallationId,
  "data-home": AbsolutePath,
  "config-home": AbsolutePath,
  "cache-home": AbsolutePath,
  "state-home": AbsolutePath
})
export type DaemonArgs = typeof DaemonArgs.Type

const FLAGS = ["installation-id", "data-home", "config-home", "cache-home", "state-home"] as const

/** The arguments a service unit or supervisor passes to blctxd, in a stable order. */
export const daemonArgv = (args: DaemonArgs): ReadonlyArray<string> => FLAGS.flatMap((f) => [`--${f}`, args[f]])

/** Decodes `--flag value` pairs strictly: unknown, repeated or missing flags are refused. */
export const parseDaemonArgv = (argv: ReadonlyArray<string>): Either.Either<DaemonArgs, string> => {
  const record: Record<string, string> = {}
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i] ?? ""
    const value = argv[i + 1]
    const name = flag.startsWith("--") ? flag.slice(2) : ""
    if (!(FLAGS as ReadonlyArray<string>).includes(name)) return Either.left(`unknown argument ${quoteValue(flag)}`)
    if (value === undefined) return Either.left(`${flag} needs a value`)
    if (name in record) return Either.left(`${flag} given twice`)
    record[name] = value
  }
  return Schema.decodeUnknownEither(DaemonArgs)(record).pipe(Either.mapLeft((e) => describeDecodeError(e, "arguments")))
}
