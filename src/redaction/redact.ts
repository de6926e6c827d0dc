/**
 * Secret redaction, applied before any text is stored, indexed or embedded. Patterns are
 * deliberately greedy on the side of privacy: a redacted false positive costs a little recall,
 * a stored secret costs the person their credential.
 */

export type SecretKind =
  | "openai_key"
  | "github_token"
  | "aws_access_key"
  | "slack_token"
  | "google_api_key"
  | "bearer_token"
  | "basic_credentials"
  | "private_key"
  | "keyed_value"

export interface Redaction {
  readonly text: string
  /** Number of secrets replaced, by kind. Empty when nothing was found. */
  readonly counts: Readonly<Partial<Record<SecretKind, number>>>
  readonly total: number
}

const marker = (kind: SecretKind) => `[REDACTED:${kind}]`

/** Token-shaped secrets: the whole match is the secret. Order matters: longer shapes first. */
const TOKEN_PATTERNS: ReadonlyArray<readonly [SecretKind, RegExp]> = [
  [
    "private_key",
    /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)/g
  ],
  ["openai_key", /\bsk-(?:proj-|svcacct-|admin-|ant-)?[A-Za-z0-9_-]{20,}/g],
  ["github_token", /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})/g],
  ["aws_access_key", /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b/g],
  ["slack_token", /\bxox[abposr]-[A-Za-z0-9-]{10,}/g],
  ["google_api_key", /\bAIza[0-9A-Za-z_-]{35}/g],
  ["bearer_token", /(?<=\b[Bb]earer\s{1,10})[A-Za-z0-9._~+/=-]{8,}/g],
  ["basic_credentials", /(?<=\b[Bb]asic\s{1,10})[A-Za-z0-9+/]{8,}={0,2}/g]
]

/** Names that mark the following value as secret (token, secret, password, api_key, authorization, cookie...). */
const SECRET_KEY =
  "[A-Za-z0-9_.-]*(?:token|secret|passw(?:or)?d|passwd|api[_-]?key|apikey|authorization|cookie|credential|private[_-]?key|access[_-]?key|session[_-]?id)[A-Za-z0-9_.-]*"

/**
 * `key: value`, `key=value`, `"key": "value"`, `KEY='value'`, `-H "Authorization: value"`.
 * Group 1 keeps the key and separator; the value that follows is replaced.
 */
const KEYED_VALUE = new RegExp(
  `((?:^|[\\s{,;(&?"'\`])["']?${SECRET_KEY}["']?\\s*(?::|=|=>)\\s*)(?:(\\[REDACTED:[a-z_]+\\])|"((?:[^"\\\\\\n]|\\\\.)+)"|'([^'\\n]+)'|([^\\s"',;&)}\\]]+))`,
  "gi"
)

export const redactSecrets = (input: string): Redaction => {
  const counts: Partial<Record<SecretKind, number>> = {}
  const bump = (kind: SecretKind) => {
    counts[kind] = (counts[kind] ?? 0) + 1
  }
  let text = input
  for (const [kind, pattern] of TOKEN_PATTERNS) {
    text = text.replace(pattern, () => {
      bump(kind)
      return marker(kind)
    })
  }
  text = text.replace(
    KEYED_VALUE,
    (
      whole,
      prefix: string,
      redacted: string | undefined,
      dq: string | undefined,
      sq: string | undefined,
      bare: string | undefined
    ) => {
      const value = dq ?? sq ?? bare ?? ""
      // A value already replaced, or a placeholder too short to be a credential, stays.
      if (redacted !== undefined || value.length < 4 || /^(?:bearer|basic)$/i.test(value)) return whole
      bump("keyed_value")
      const quote = dq !== undefined ? '"' : sq !== undefined ? "'" : ""
      return `${prefix}${quote}${marker("keyed_value")}${quote}`
    }
  )
  const total = Object.values(counts).reduce((a, b) => a + b, 0)
  return { text, counts, total }
}
