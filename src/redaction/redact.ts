/**
 * Secret redaction, applied before any text is stored, indexed, embedded, or shown as searchable
 * text. Patterns lean towards privacy: a redacted false positive costs a little recall, a stored
 * secret costs the person their credential. Ordinary prose and code identifiers are kept: a value
 * after a secret-sounding name is redacted only when it looks like a literal credential.
 *
 * Every rule is linear in the input. Token patterns can start only where a run of token characters
 * starts (a lookbehind) and every quantifier is bounded, so a failed attempt costs at most its bound;
 * private key blocks and `name = value` pairs are found by scanners that never backtrack.
 */

/**
 * The version of these rules, stored in the database beside what they redacted. A daemon that finds
 * an older version re-redacts every stored text (the `redact` job kind). Bump it whenever a rule
 * starts redacting something it kept before. Version 1 is every database from before it was stored.
 */
export const REDACTION_RULES_VERSION = 2

export type SecretKind =
  | "private_key"
  | "jwt"
  | "url_credentials"
  | "stripe_key"
  | "npm_token"
  | "google_oauth"
  | "azure_key"
  | "azure_sas"
  | "azure_client_secret"
  | "twilio_key"
  | "twilio_credentials"
  | "openai_key"
  | "github_token"
  | "gitlab_token"
  | "aws_access_key"
  | "slack_token"
  | "slack_webhook"
  | "google_api_key"
  | "sendgrid_key"
  | "huggingface_token"
  | "discord_token"
  | "discord_webhook"
  | "bearer_token"
  | "basic_credentials"
  | "authorization"
  | "cookie"
  | "keyed_value"

export interface Redaction {
  readonly text: string
  /** Number of secrets replaced, by kind. Empty when nothing was found. */
  readonly counts: Readonly<Partial<Record<SecretKind, number>>>
  readonly total: number
}

const MARKER_PREFIX = "[REDACTED:"
const marker = (kind: SecretKind) => `${MARKER_PREFIX}${kind}]`

type Bump = (kind: SecretKind) => void
type Rule = (text: string, bump: Bump) => string

// ---- value shape helpers ------------------------------------------------------------------------

const DIGIT = /[0-9]/
const LETTER = /[A-Za-z]/

const asciiCounts = new Int32Array(128)

/** Shannon entropy in bits per character, of the first 256 characters (enough to tell random from not). */
const entropy = (whole: string): number => {
  const value = whole.length > 256 ? whole.slice(0, 256) : whole
  const other = new Map<number, number>()
  const touched: Array<number> = []
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i)
    if (c < 128) {
      if (asciiCounts[c] === 0) touched.push(c)
      asciiCounts[c] = (asciiCounts[c] ?? 0) + 1
    } else other.set(c, (other.get(c) ?? 0) + 1)
  }
  let bits = 0
  const add = (n: number) => {
    const p = n / value.length
    bits -= p * Math.log2(p)
  }
  for (const c of touched) {
    add(asciiCounts[c] ?? 0)
    asciiCounts[c] = 0
  }
  for (const n of other.values()) add(n)
  return bits
}

/** Mean length of the runs of lowercase letters: about 2 in random base62, 5 or more in words. */
const meanLowercaseRun = (value: string): number => {
  const runs = value.match(/[a-z]+/g)
  if (runs === null) return 0
  return runs.reduce((n, r) => n + r.length, 0) / runs.length
}

/** Letters without digits that are random rather than words (`dXNlcjpwYXNz`, not `InterpolationInTemplate`). */
const randomLetters = (value: string): boolean =>
  value.length >= 16 &&
  !/\s/.test(value) &&
  /[a-z]/.test(value) &&
  /[A-Z]/.test(value) &&
  meanLowercaseRun(value) <= 3 &&
  entropy(value) >= 3

const digitShare = (value: string) => (value.match(/[0-9]/g)?.length ?? 0) / value.length

/** Random-looking enough to be a credential (a token, key or signature), not a word, a name or a number. */
const credentialLike = (value: string): boolean =>
  value.length >= 8 &&
  LETTER.test(value) &&
  (DIGIT.test(value) ? digitShare(value) >= 0.1 || meanLowercaseRun(value) <= 4 : randomLetters(value)) &&
  !/^\d{4}-\d{2}-\d{2}/.test(value)

/** Stronger than `credentialLike`: for names such as `key` that often hold ordinary identifiers. */
const stronglyRandom = (value: string): boolean =>
  (value.length >= 16 && credentialLike(value) && DIGIT.test(value) && entropy(value) >= 3) ||
  (value.length >= 24 && randomLetters(value))

// ---- token shapes: the whole match is the secret ------------------------------------------------

const tokenRule =
  (kind: SecretKind, pattern: RegExp, accept?: (match: string) => boolean): Rule =>
  (text, bump) =>
    text.replace(pattern, (match: string) => {
      if (accept !== undefined && !accept(match)) return match
      bump(kind)
      return marker(kind)
    })

const hasDigitAndLetter = (s: string) => DIGIT.test(s) && LETTER.test(s)

/** `Basic` credentials decode to `user:password`; prose after the word "basic" does not. */
const decodesToUserPass = (value: string): boolean => {
  const decoded = Buffer.from(value, "base64").toString("latin1")
  return /^[\x20-\x7e]{1,256}:[\x20-\x7e]{0,256}$/.test(decoded)
}

/** A Discord token's first part is the base64 of the account's id, a snowflake of 17 to 20 digits. */
const discordUserId = (token: string): boolean =>
  /^[0-9]{17,20}$/.test(Buffer.from(token.slice(0, token.indexOf(".")), "base64").toString("latin1"))

const TOKEN_RULES: ReadonlyArray<Rule> = [
  // JSON Web Tokens (and JWEs): base64url segments, the header starting `eyJ` (`{"`).
  tokenRule(
    "jwt",
    /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,16384}\.[A-Za-z0-9_-]{4,16384}\.[A-Za-z0-9_-]{0,16384}(?:\.[A-Za-z0-9_-]{0,16384}){0,2}/g
  ),
  // Discord bot and user tokens: id (base64), timestamp (6), HMAC (27 in older tokens, 38 now). A
  // dot followed by a token character continues a dotted name, so the match must not end there.
  tokenRule(
    "discord_token",
    /(?<![A-Za-z0-9_.-])[MNO][A-Za-z0-9_-]{22,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}(?![A-Za-z0-9_-]|\.[A-Za-z0-9_-])/g,
    discordUserId
  ),
  tokenRule(
    "stripe_key",
    /(?<![A-Za-z0-9_])(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,247}|whsec_[A-Za-z0-9+/=]{20,255})/g
  ),
  tokenRule("npm_token", /(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36,255}/g),
  tokenRule("google_oauth", /(?<![A-Za-z0-9_.-])ya29\.[A-Za-z0-9_.-]{20,4096}/g),
  tokenRule("google_oauth", /(?<![A-Za-z0-9_-])GOCSPX-[A-Za-z0-9_-]{20,64}/g),
  tokenRule("google_oauth", /(?<![A-Za-z0-9_/:.-])1\/\/[A-Za-z0-9_-]{30,1024}/g, hasDigitAndLetter),
  tokenRule("google_oauth", /(?<![A-Za-z0-9_/:.-])4\/0A[A-Za-z0-9_-]{30,1024}/g),
  tokenRule(
    "azure_client_secret",
    /(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])/g
  ),
  tokenRule("twilio_key", /(?<![A-Za-z0-9])SK[0-9a-fA-F]{32}(?![A-Za-z0-9])/g),
  tokenRule(
    "openai_key",
    /(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-|ant-(?:[a-z]{2,8}[0-9]{2}-)?)?[A-Za-z0-9_-]{20,255}/g,
    hasDigitAndLetter
  ),
  tokenRule("github_token", /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255})/g),
  tokenRule("gitlab_token", /(?<![A-Za-z0-9_-])(?:glpat|glptt|gldt|glrt|glsoat)-[A-Za-z0-9_-]{20,64}/g),
  tokenRule(
    "aws_access_key",
    /(?<![A-Za-z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ABIA|ACCA|AIPA|ANVA|APKA)[0-9A-Z]{16}(?![A-Za-z0-9])/g
  ),
  tokenRule("slack_token", /(?<![A-Za-z0-9_-])xox[abposre]-[A-Za-z0-9-]{10,512}/g),
  tokenRule("google_api_key", /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}/g),
  tokenRule("sendgrid_key", /(?<![A-Za-z0-9_-])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}/g),
  tokenRule("huggingface_token", /(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{34,64}/g),
  tokenRule(
    "bearer_token",
    /(?<=\b(?:[Bb]earer|BEARER)[ \t]{1,10})[A-Za-z0-9._~+/=-]{8,16384}/g,
    (v) => DIGIT.test(v) || (v.length >= 20 && credentialLike(v))
  ),
  tokenRule("basic_credentials", /(?<=\b(?:[Bb]asic|BASIC)[ \t]{1,10})[A-Za-z0-9+/]{8,4096}={0,2}/g, decodesToUserPass),
  // `Authorization: token …`, `Bot …`, `SSWS …`: the schemes that are not Bearer or Basic.
  tokenRule(
    "authorization",
    /(?<=\b(?:[Pp]roxy-)?[Aa]uthorization(?:\\?["'])?[ \t]{0,4}[:=][ \t]{0,4}(?:\\?["'])?(?:[Tt]oken|Bot|SSWS|OAuth|Key|ApiKey|Api-Key)[ \t]{1,4})[A-Za-z0-9._~+/=:-]{8,4096}/g,
    (v) => DIGIT.test(v) || credentialLike(v)
  )
]

// ---- credentials inside URLs and pairs ----------------------------------------------------------

/**
 * `scheme://user:password@host`: the password is replaced, scheme, user and host stay so the text
 * still says where it pointed. The password runs to the last `@` before the path, as URL parsers
 * read it. A userinfo without a password that is itself a token (`https://<token>@host`) goes too.
 */
const urlCredentials: Rule = (text, bump) =>
  text
    .replace(
      /(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]{1,30}:\/\/)([^\s:/?#@"'<>\\[\]]{0,256}):([^\s/?#"'<>\\]{1,512})@(?=[A-Za-z0-9[._~%-])/g,
      (whole: string, scheme: string, user: string, password: string) => {
        if (password.includes(MARKER_PREFIX) || PLACEHOLDER.test(password)) return whole
        bump("url_credentials")
        return `${scheme}${user}:${marker("url_credentials")}@`
      }
    )
    .replace(
      /(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]{1,30}:\/\/)([A-Za-z0-9_~.%+-]{20,256})@(?=[A-Za-z0-9[])/g,
      (whole: string, scheme: string, user: string) => {
        if (!hasDigitAndLetter(user)) return whole
        bump("url_credentials")
        return `${scheme}${marker("url_credentials")}@`
      }
    )

const slackWebhook: Rule = (text, bump) =>
  text.replace(
    /(hooks\.slack\.com\/(?:services|workflows|triggers)\/)[A-Za-z0-9_/-]{20,256}/g,
    (_whole: string, prefix: string) => {
      bump("slack_webhook")
      return `${prefix}${marker("slack_webhook")}`
    }
  )

/** `discord.com/api/webhooks/<id>/<token>` (also discordapp.com, ptb., canary., /v10): id and token go. */
const discordWebhook: Rule = (text, bump) =>
  text.replace(
    /(?<![A-Za-z0-9_-])((?:(?:ptb|canary)\.)?discord(?:app)?\.com\/api(?:\/v[0-9]{1,2})?\/webhooks\/)[0-9]{17,20}\/[A-Za-z0-9_-]{40,128}/g,
    (_whole: string, prefix: string) => {
      bump("discord_webhook")
      return `${prefix}${marker("discord_webhook")}`
    }
  )

/** A Twilio account SID (`AC` + 32 hex) followed on the same line by its auth token (32 hex): both go. */
const twilioPair: Rule = (text, bump) =>
  text.replace(
    /(?<![A-Za-z0-9])AC[0-9a-f]{32}(?![A-Za-z0-9])([^\n]{1,80}?)(?<![A-Za-z0-9])[0-9a-f]{32}(?![A-Za-z0-9])/g,
    (_whole: string, gap: string) => {
      bump("twilio_credentials")
      bump("twilio_credentials")
      return `${marker("twilio_credentials")}${gap}${marker("twilio_credentials")}`
    }
  )

// ---- private key blocks -------------------------------------------------------------------------

const PEM_BEGIN = /-{4,5} ?BEGIN (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY(?: BLOCK)? ?-{4,5}/g
const PEM_END = /-{4,5} ?END (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY(?: BLOCK)? ?-{4,5}/g

/**
 * Where the body of a block without an END line stops (a truncated paste): armor headers, then
 * base64 lines; the first line that is neither (or a blank line after the body) ends it. `null`
 * when no key material follows (the marker quoted in prose). Lines are split on real newlines and
 * on the `\n` escapes of a key pasted from JSON.
 */
const unterminatedBodyEnd = (text: string, from: number, limit: number): number | null => {
  // Never past the next BEGIN line: each stretch of text is read once, whatever the input.
  const segment = text.slice(from, limit)
  const LINE = /(.*?)(?:\r?\n|\\n|$)/y
  let position = 0
  let end = 0
  let sawBody = false
  while (position < segment.length) {
    LINE.lastIndex = position
    const line = LINE.exec(segment)
    if (line === null || line[0].length === 0) break
    const content = (line[1] ?? "").trim()
    if (content === "") {
      if (sawBody) break
    } else if (/^[A-Za-z0-9+/]{16,}={0,2}$/.test(content) || /^=[A-Za-z0-9+/]{4}$/.test(content)) {
      sawBody = true
      end = position + (line[1] ?? "").length
    } else if (!sawBody && /^[A-Za-z][A-Za-z0-9-]{0,30}: /.test(content)) {
      end = position + (line[1] ?? "").length
    } else break
    position += line[0].length
  }
  return sawBody ? from + end : null
}

/**
 * Every `-----BEGIN … PRIVATE KEY-----` block (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP … BLOCK) up to
 * its END line; a block whose END line is missing loses the key material that follows it.
 */
const privateKeys: Rule = (text, bump) => {
  const parts: Array<string> = []
  let last = 0
  // Each search below runs at most once per position: nothing here is quadratic.
  let nextEnd: RegExpExecArray | null | undefined
  const endAfter = (position: number) => {
    if (nextEnd === undefined || (nextEnd !== null && nextEnd.index < position)) {
      PEM_END.lastIndex = position
      nextEnd = PEM_END.exec(text)
    }
    return nextEnd
  }
  PEM_BEGIN.lastIndex = 0
  let begin = PEM_BEGIN.exec(text)
  while (begin !== null) {
    const bodyStart = begin.index + begin[0].length
    PEM_BEGIN.lastIndex = bodyStart
    const following = PEM_BEGIN.exec(text)
    const end = endAfter(bodyStart)
    const stop =
      end !== null && (following === null || end.index < following.index)
        ? end.index + end[0].length
        : unterminatedBodyEnd(text, bodyStart, following === null ? text.length : following.index)
    if (stop === null) {
      begin = following
      continue
    }
    parts.push(text.slice(last, begin.index), marker("private_key"))
    bump("private_key")
    last = stop
    if (following !== null && following.index < stop) {
      PEM_BEGIN.lastIndex = stop
      begin = PEM_BEGIN.exec(text)
    } else begin = following
  }
  if (parts.length === 0) return text
  parts.push(text.slice(last))
  return parts.join("")
}

// ---- base64-encoded private keys ---------------------------------------------------------------

/** `-----BEGIN` base64-encoded from the start of a line: how a whole PEM file looks as one blob. */
const BASE64_PEM = "LS0tLS1CRUdJTi"

const isBase64Char = (c: number) =>
  (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47

/** Where a line of base64 that starts at `from` ends: its characters, then at most two `=`. */
const base64LineEnd = (text: string, from: number): number => {
  let i = from
  while (i < text.length && isBase64Char(text.charCodeAt(i))) i++
  for (let pad = 0; pad < 2 && text[i] === "="; pad++) i++
  return i
}

/** The line break at `at` (a newline, CRLF, or the `\n` escape of JSON) and the indentation after it. */
const breakLength = (text: string, at: number): number => {
  const size = text.startsWith("\r\n", at) ? 2 : text[at] === "\n" ? 1 : text.startsWith("\\n", at) ? 2 : 0
  if (size === 0) return 0
  let j = at + size
  while (j - at - size < 40 && (text[j] === " " || text[j] === "\t")) j++
  return j - at
}

/** What may follow the last line of a blob: the end of a line, of the text, or of a quoted string. */
const endsBlobLine = (text: string, at: number) => at >= text.length || /[\r\n\\"'`]/.test(text[at] as string)

/**
 * The end of a base64 run that starts at `from`, across the line breaks of a wrapped blob: the
 * lines after the first are taken while they are as wide as the first (a wrap) and only base64;
 * a shorter one is the last, taken when it ends its line and completes the base64 length.
 */
const base64RunEnd = (text: string, from: number): number => {
  let end = base64LineEnd(text, from)
  const width = end - from
  let total = width
  while (text[end - 1] !== "=") {
    const gap = breakLength(text, end)
    if (gap === 0) break
    const start = end + gap
    const next = base64LineEnd(text, start)
    const length = next - start
    if (length === 0 || length > width || !endsBlobLine(text, next)) break
    if (length < width && (total + length) % 4 !== 0) break
    end = next
    total += length
    if (length < width) break
  }
  return end
}

/** Whether a base64 run decodes to the first line of a private key (not a certificate or public key). */
const decodesToPrivateKeyHeader = (run: string): boolean => {
  const head = run.slice(0, 240).replace(/[^A-Za-z0-9+/]/g, "")
  const decoded = Buffer.from(head.slice(0, head.length - (head.length % 4)), "base64").toString("latin1")
  return /^-----BEGIN (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY/.test(decoded)
}

/**
 * A PEM private key base64-encoded as one blob (a Kubernetes secret's data, an environment
 * variable), with no label to go by: the run from its `LS0tLS1CRUdJTi` to its end, wrapped or not.
 * Each candidate is read once and the scan resumes after it, so the cost is linear.
 */
const base64PrivateKeys: Rule = (text, bump) => {
  const parts: Array<string> = []
  let last = 0
  let from = text.indexOf(BASE64_PEM)
  while (from >= 0) {
    const before = from > 0 ? text.charCodeAt(from - 1) : 32
    // Inside a longer run of base64 (or of a token), not the start of a blob; `\nLS0t` in JSON is.
    const escapedBreak = text[from - 1] === "n" && text[from - 2] === "\\"
    if (!escapedBreak && (isBase64Char(before) || before === 61 || before === 45 || before === 95)) {
      from = text.indexOf(BASE64_PEM, from + 1)
      continue
    }
    const end = base64RunEnd(text, from)
    if (decodesToPrivateKeyHeader(text.slice(from, Math.min(end, from + 240)))) {
      parts.push(text.slice(last, from), marker("private_key"))
      bump("private_key")
      last = end
    }
    from = text.indexOf(BASE64_PEM, end)
  }
  if (parts.length === 0) return text
  parts.push(text.slice(last))
  return parts.join("")
}

// ---- name = value -------------------------------------------------------------------------------

type Tier = "password" | "token" | "key"

/** Words after a secret word that make the name about the secret, not the secret itself. */
const NOT_SECRET_AFTER = new Set(
  (
    "name names id ids arn path paths file files filename dir directory ref type types count len length size env " +
    "var version header field prefix suffix ttl expiry expires expiration exp at in max min limit limits policy " +
    "pattern regex format hint label placeholder prompt required rotation provider store manager source kind " +
    "mode scope scopes url uri endpoint endpoints usage index budget lifetime age strategy helper command cmd " +
    "method class handler set list cache validator error errors message msg text description note input created " +
    "updated issued location host enabled disabled flag option options param params schema spec column table " +
    "encoding algorithm alg bits stdin fd symbol tag"
  ).split(" ")
)
/** Words before a secret word that name something public or a counter, not a credential. */
const NOT_SECRET_BEFORE = new Set(
  "public pub eos bos pad unk sep cls mask max min num total next prev page cursor continuation cancellation".split(" ")
)
const TOKEN_WORDS = new Set(
  "auth authorization credential credentials creds cred cookie sig signature sas pat jwt apikey accesskey accountkey".split(
    " "
  )
)
/** Words before `key` that make it a credential (`api_key`, `AccountKey`, `x-api-key`, `signing_key`). */
const SECRET_KEY_QUALIFIERS = new Set(
  (
    "api access account client app master signing sign encryption license licence subscription auth shared " +
    "storage service consumer admin deploy ssh hmac jwt webhook write integration partner developer server " +
    "primary secondary rest ingest management mgmt"
  ).split(" ")
)
/** Azure connection-string keys whose value runs to the next `;` (a SAS token contains `&` and `=`). */
const AZURE_WHOLE_VALUE: Readonly<Record<string, SecretKind>> = {
  accountkey: "azure_key",
  sharedaccesskey: "azure_key",
  sharedsecretvalue: "azure_key",
  sharedaccesssignature: "azure_sas"
}

const nameParts = (name: string): ReadonlyArray<string> =>
  (name.match(/[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g) ?? []).map((p) => p.toLowerCase())

const partTier = (part: string, previous: string | undefined): Tier | null => {
  if (part.includes("password") || part.includes("passwd") || /secrets?$/.test(part)) return "password"
  if (part === "pwd" || part === "passphrase" || part === "passcode") return "password"
  if (part === "privatekey" || (part === "key" && previous === "private")) return "password"
  if (part.endsWith("token") || TOKEN_WORDS.has(part)) return "token"
  if (part === "key") return previous !== undefined && SECRET_KEY_QUALIFIERS.has(previous) ? "token" : "key"
  if (part.endsWith("apikey") || part.endsWith("accesskey") || part.endsWith("secretkey")) return "token"
  return null
}

const RANK: Readonly<Record<Tier, number>> = { key: 1, token: 2, password: 3 }

const tierCache = new Map<string, Tier | null>()

/** How secret the value of a `name` is: `password` (any literal), `token` (credential-like), `key` (strongly random). */
export const nameTier = (name: string): Tier | null => {
  const cached = tierCache.get(name)
  if (cached !== undefined) return cached
  const tier = tierOf(name)
  // Names repeat (the same keys in every config paste); the cache stays small.
  if (tierCache.size < 4096) tierCache.set(name, tier)
  return tier
}

const tierOf = (name: string): Tier | null => {
  // npm's `.npmrc` keeps base64 `user:password` in `_auth` and a base64 password in `_password`.
  if (name === "_auth" || name === "_password") return "password"
  const parts = nameParts(name)
  let best: Tier | null = null
  for (const [i, part] of parts.entries()) {
    // `DB_PASS`, `smtp-pass`; but a lone `pass` is as often a test result (`pass: "passed"`), and
    // camelCase `allPass` or `PassThrough` is code.
    const tier =
      part === "pass" ? (parts.length > 1 && /[_-]/.test(name) ? "password" : null) : partTier(part, parts[i - 1])
    if (tier === null) continue
    if (parts.slice(i + 1).some((p) => NOT_SECRET_AFTER.has(p))) continue
    if (parts.slice(0, i).some((p) => NOT_SECRET_BEFORE.has(p))) continue
    if (best === null || RANK[tier] > RANK[best]) best = tier
  }
  return best
}

const SECRET_WORDS = /pass|pwd|secret|token|key|auth|credential|cookie/i

/** Placeholders, variables, types and booleans: values that say where a secret is, not what it is. */
const PLACEHOLDER =
  /^(?:<[^>]*>|\[[^\]]*\]|\{\{.*\}\}|\$\{\{.*\}\}|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%[A-Za-z_][A-Za-z0-9_]*%|(.)\1*|\.{2,}|…|your[-_ ]?[A-Za-z_ -]*|my[-_ ][A-Za-z_ -]*|[A-Za-z_-]*[-_](?:here|goes_here)|x{3,}.*|\*{3,}.*|redacted|changeme|change_me|replace_me|placeholder|example|dummy|null|none|nil|undefined|true|false|yes|no|on|off|required|optional|string|str|number|int|integer|bool|boolean|bytes|any|unknown|object)$/i

/** A variable, member access or path-like reference (`process.env.TOKEN`, `self.password`, `Foo::BAR`). */
const CODE_REFERENCE =
  /^(?:[A-Za-z_$][\w$]*(?:[?!]?\.[A-Za-z_$][\w$]*)+[?!]*|[A-Za-z_][\w]*(?:::[A-Za-z_][\w]*)+)$|\|\||&&|\?\?|=>|[=!]==/
const PATH_OR_URL =
  /^(?:(?:~|\.{1,2})?\/(?:[a-z._-][A-Za-z0-9._-]*)?(?:\/[A-Za-z0-9._-]*)*|[A-Za-z][A-Za-z0-9+.-]{0,30}:\/\/\S*)$/
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/** Stops a bare (unquoted) value. */
const BARE_STOP = new Set([..." \t\r\n\"'`,;&(){}[]<>\\"])
/** Stops the value of an Azure connection-string key, which may contain `&`, `=` and `,`. */
const AZURE_STOP = new Set([..." \t\r\n\"';"])
const MAX_VALUE = 4096
/**
 * A bare value longer than this after a secret name is taken as a secret (a key, a blob) without
 * looking closer; it also bounds the work per name, so a value full of `name=` stays linear.
 */
const LONG_BARE = 160

interface Value {
  readonly start: number
  readonly end: number
  readonly quoted: boolean
  /** The character right after a bare value (`(` makes it a call, `[` an index...). */
  readonly after: string
}

/** The value at `position`: quoted (also `\"…\"` from escaped JSON), or bare up to a delimiter. */
const valueAt = (text: string, position: number, stop: ReadonlySet<string>): Value | null => {
  const limit = Math.min(text.length, position + MAX_VALUE)
  const c = text[position]
  if (c === "\\" && text[position + 1] === '"') {
    for (let j = position + 2; j < limit; j++) {
      const x = text[j]
      if (x === "\n") return null
      if (x === "\\" && text[j + 1] === '"') {
        return j > position + 2 ? { start: position + 2, end: j, quoted: true, after: "" } : null
      }
    }
    return null
  }
  if (c === '"' || c === "'" || c === "`") {
    for (let j = position + 1; j < limit; j++) {
      const x = text[j]
      if (x === "\n") return null
      if (x === "\\" && c === '"') {
        j++
        continue
      }
      if (x === c) return j > position + 1 ? { start: position + 1, end: j, quoted: true, after: "" } : null
    }
    return null
  }
  let j = position
  while (j < limit && !stop.has(text[j] as string)) j++
  return j > position ? { start: position, end: j, quoted: false, after: text[j] ?? "" } : null
}

/** Whether what follows a value on its line is empty or a comment (`password: swordfish  # prod`). */
const endsLine = (text: string, from: number) => /^[ \t]*(?:#.*|\/\/.*)?(?:\r?\n|$)/.test(text.slice(from, from + 256))

type Context = "literal" | "loose" | "flag"

/**
 * Whether a value assigned to a name of this tier is a secret. `literal`: quoted, `NAME=value` with
 * no spaces, a YAML `value:`; `loose`: `name: value` / `name = value` unquoted, which is as often code
 * (`token = nextToken`) as configuration; `flag`: `--password value`.
 */
const secretValue = (
  tier: Tier,
  value: string,
  context: Context,
  quoted: boolean,
  after: string,
  lineEnds: () => boolean
): boolean => {
  // The cheap test of each tier first: most candidates fail it.
  const shaped =
    tier === "password" ? value.length >= 4 : tier === "token" ? credentialLike(value) : stronglyRandom(value)
  if (!shaped) return false
  // A placeholder, or an interpolation (`${x}`): a template, not a literal.
  if (value.includes(MARKER_PREFIX) || value.includes("${") || PLACEHOLDER.test(value)) return false
  if (CODE_REFERENCE.test(value) || PATH_OR_URL.test(value)) return false
  if (after === "(" || after === "[" || after === "<") return false
  if (/^(?:bearer|basic|token|digest)$/i.test(value)) return false
  const identifier = IDENTIFIER.test(value)
  const digits = DIGIT.test(value)
  // `password = db_password`, `token: authToken`: a reference to another name holding the secret.
  if (identifier && !digits && SECRET_WORDS.test(value)) return false
  // A quoted phrase of plain words is a label or a sentence ("Show Password"), not a password.
  if (quoted && /^[A-Za-z]+(?: [A-Za-z]+)+$/.test(value)) return false
  if (context === "literal" || !identifier || digits) return true
  // Unquoted identifiers in `name: value` / `name = value` are code; but a lone word at the end of
  // a `password:` line is a configured password, not a sentence.
  return tier === "password" && context === "loose" && /^[A-Za-z]+$/.test(value) && lineEnds()
}

/**
 * Replaces the value after each match of `start` whose name (group `name`) is secret. Scanning
 * resumes right after a name that is not secret, so a value that looks like `name=value` itself is
 * still examined.
 */
const scanAssignments =
  (start: RegExp, contextOf: (m: RegExpExecArray) => Context): Rule =>
  (text, bump) => {
    const parts: Array<string> = []
    let last = 0
    start.lastIndex = 0
    for (let m = start.exec(text); m !== null; m = start.exec(text)) {
      const resume = m.index + m[0].length
      if (m[0].length === 0) start.lastIndex++
      const name = m.groups?.name ?? ""
      const tier = nameTier(name)
      if (tier === null) continue
      const azure = AZURE_WHOLE_VALUE[name.toLowerCase()]
      const value = valueAt(text, resume, azure === undefined ? BARE_STOP : AZURE_STOP)
      if (value === null) continue
      // `"Password:" + x`: the quote opened before the name closes after the separator, so the
      // name and separator are a label inside a string, and what follows is not its value.
      if (m.groups?.open !== undefined && m.groups.close === undefined && value.quoted) continue
      const content = text.slice(value.start, value.end)
      const context: Context = value.quoted ? "literal" : contextOf(m)
      const secret =
        azure !== undefined
          ? content.length >= 8 && !content.includes(MARKER_PREFIX) && !PLACEHOLDER.test(content)
          : !value.quoted && content.length > LONG_BARE
            ? !content.includes(MARKER_PREFIX) && !/^[$%<{]/.test(content) && !PATH_OR_URL.test(content)
            : secretValue(tier, content, context, value.quoted, value.after, () =>
                endsLine(text, value.end + (value.quoted ? 1 : 0))
              )
      if (!secret) continue
      const kind: SecretKind = azure ?? (name.toLowerCase() === "sig" ? "azure_sas" : "keyed_value")
      bump(kind)
      parts.push(text.slice(last, value.start), marker(kind))
      last = value.end
      start.lastIndex = Math.max(value.end, start.lastIndex)
    }
    if (parts.length === 0) return text
    parts.push(text.slice(last))
    return parts.join("")
  }

/**
 * `name=value`, `name: value`, `"name": "value"`, `'name' => 'value'`, `name := value`,
 * `export NAME=value`, env-file and `.npmrc` lines, URL query parameters, connection strings.
 */
const assignments = scanAssignments(
  /(?<![A-Za-z0-9_.-])(?<open>\\?["'`])?(?<name>-{0,2}[A-Za-z_][A-Za-z0-9_.-]{0,63})(?<close>\\?["'`])?(?<before>[ \t]{0,4})(?<sep>:=|=>|=|:)(?![=:/])(?<after>[ \t]{0,4})/g,
  (m) => (m.groups?.sep === "=" && m.groups.before === "" && m.groups.after === "" ? "literal" : "loose")
)

/** `--password value`, `--api-token value` on a command line. */
const flags = scanAssignments(
  /(?<![A-Za-z0-9_-])(?<name>--?[A-Za-z][A-Za-z0-9_-]{0,62})[ \t]{1,4}(?=[^\s-])/g,
  () => "flag"
)

/** Kubernetes `env`: `- name: DB_PASSWORD` then `value: …` on the next line. */
const kubernetesEnv = scanAssignments(
  /\bname:[ \t]{0,4}(["']?)(?<name>[A-Za-z_][A-Za-z0-9_.-]{0,63})\1[ \t]{0,4}\r?\n[ \t]{0,40}(?:-[ \t]{1,4})?value:[ \t]{0,4}/g,
  () => "literal"
)

/** `.netrc`: `machine host login me password value`, on one line or several. */
const netrc = scanAssignments(
  /(?<![A-Za-z0-9_-])(?:machine[ \t]+\S{1,253}|default)\s{1,40}(?:(?:login|account)[ \t]+\S{1,256}\s{1,40}){0,2}(?<name>password)[ \t]{1,4}/g,
  () => "literal"
)

/** `Cookie:` / `Set-Cookie:` headers: every cookie value is a session credential. */
const cookies: Rule = (text, bump) =>
  text.replace(
    /(?<![A-Za-z0-9_-])((?:[Ss]et-)?[Cc]ookie(?:\\?["'])?[ \t]{0,4}:[ \t]{0,4})([^\r\n"'`]{3,4096})/g,
    (whole: string, prefix: string, value: string) => {
      // A cookie list starts `name=`; `cookie: Cookie) =>` in code does not.
      if (!/^[A-Za-z0-9_.!#$%*+^|~-]{1,128}=/.test(value) || value.includes(MARKER_PREFIX)) return whole
      const kept = value.match(/[ \t]*$/)?.[0] ?? ""
      bump("cookie")
      return `${prefix}${marker("cookie")}${kept}`
    }
  )

/** In order: blocks first (their base64 must not be cut by other rules), then URLs, shapes, names. */
const RULES: ReadonlyArray<Rule> = [
  privateKeys,
  base64PrivateKeys,
  slackWebhook,
  discordWebhook,
  ...TOKEN_RULES,
  urlCredentials,
  twilioPair,
  cookies,
  netrc,
  kubernetesEnv,
  assignments,
  flags
]

export const redactSecrets = (input: string): Redaction => {
  const counts: Partial<Record<SecretKind, number>> = {}
  let total = 0
  const bump: Bump = (kind) => {
    counts[kind] = (counts[kind] ?? 0) + 1
    total++
  }
  let text = input
  for (const rule of RULES) text = rule(text, bump)
  return { text, counts, total }
}

/** A nullable metadata field (a cwd, a version, an id), redacted like message text. */
export const redactNullable = (value: string | null): { readonly text: string | null; readonly total: number } => {
  if (value === null) return { text: null, total: 0 }
  const redacted = redactSecrets(value)
  return { text: redacted.text, total: redacted.total }
}
