import { describe, expect, it } from "@effect/vitest"
import { redactSecrets } from "./redact.js"

/** One line per secret shape the product promises to redact, with the secret that must vanish. */
const corpus: ReadonlyArray<{ readonly name: string; readonly text: string; readonly secret: string }> = [
  {
    name: "OpenAI key",
    text: "export OPENAI=sk-abcdefghijklmnopqrstuvwxyz012345",
    secret: "sk-abcdefghijklmnopqrstuvwxyz012345"
  },
  {
    name: "OpenAI project key",
    text: "use sk-proj-AbC123dEf456GhI789jKl012 please",
    secret: "sk-proj-AbC123dEf456GhI789jKl012"
  },
  {
    name: "GitHub token",
    text: "token ghp_0123456789abcdefghijABCDEFGHIJ012345 here",
    secret: "ghp_0123456789abcdefghijABCDEFGHIJ012345"
  },
  {
    name: "GitHub fine-grained PAT",
    text: "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv",
    secret: "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv"
  },
  { name: "AWS access key id", text: "aws key AKIAIOSFODNN7EXAMPLE in config", secret: "AKIAIOSFODNN7EXAMPLE" },
  { name: "Slack token", text: "SLACK xoxb-1234567890-abcdefghij-XYZ", secret: "xoxb-1234567890-abcdefghij-XYZ" },
  {
    name: "Google API key",
    text: "key=AIzaSyA1234567890abcdefghijklmnopqrstuv",
    secret: "AIzaSyA1234567890abcdefghijklmnopqrstuv"
  },
  {
    name: "Bearer token",
    text: "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig'",
    secret: "eyJhbGciOiJIUzI1NiJ9.payload.sig"
  },
  {
    name: "private key block",
    text: "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\nabc\n-----END RSA PRIVATE KEY-----\nafter",
    secret: "MIIEpAIBAAKCAQEA7"
  },
  {
    name: "OpenSSH private key",
    text: "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----",
    secret: "b3BlbnNzaC1rZXk"
  },
  { name: "password=", text: "DB_PASSWORD=hunter2hunter2 ./run", secret: "hunter2hunter2" },
  { name: "JSON secret", text: '{"client_secret": "s3cr3t-value-123", "user": "ada"}', secret: "s3cr3t-value-123" },
  { name: "YAML api_key", text: "api_key: 9f8e7d6c5b4a", secret: "9f8e7d6c5b4a" },
  { name: "cookie header", text: "Cookie: sessionid=abc123def456", secret: "sessionid=abc123def456" },
  {
    name: "quoted GitLab token",
    text: "GITLAB_TOKEN='glpat-Fake0123456789abcdEF'",
    secret: "glpat-Fake0123456789abcdEF"
  },
  { name: "quoted token", text: "CI_TOKEN='Fake-ci-token-0042'", secret: "Fake-ci-token-0042" },
  { name: "authorization without bearer", text: "authorization=Basic dXNlcjpwYXNz", secret: "dXNlcjpwYXNz" }
]

describe("redactSecrets", () => {
  for (const sample of corpus) {
    it(`removes a ${sample.name}`, () => {
      const result = redactSecrets(sample.text)
      expect(result.text).not.toContain(sample.secret)
      expect(result.text).toContain("[REDACTED:")
      expect(result.total).toBeGreaterThanOrEqual(1)
    })
  }

  it("keeps the key and quoting so the text still reads", () => {
    expect(redactSecrets('{"password": "p@ssw0rd!"}').text).toBe('{"password": "[REDACTED:keyed_value]"}')
    expect(redactSecrets("export API_KEY=abcd1234").text).toBe("export API_KEY=[REDACTED:keyed_value]")
  })

  it("counts each secret once, by kind", () => {
    const result = redactSecrets(
      "a sk-abcdefghijklmnopqrstuvwxyz012345 b AKIAIOSFODNN7EXAMPLE c sk-zyxwvutsrqponmlkjihgfedcba987654"
    )
    expect(result.counts).toEqual({ openai_key: 2, aws_access_key: 1 })
    expect(result.total).toBe(3)
  })

  it("leaves ordinary prose, code and short placeholders alone", () => {
    const prose = [
      "We decided to deploy with a blue-green rollout on Friday.",
      "const tokenizer = new Tokenizer(vocab)",
      "Ask for the password in the form; never log it.",
      "the token count was 384 with overlap 48",
      "skip the tests (sk-1 is not a key)"
    ]
    for (const text of prose) expect(redactSecrets(text)).toEqual({ text, counts: {}, total: 0 })
  })

  it("redacts a URL's password but keeps its scheme, user and host", () => {
    expect(redactSecrets("psql postgres://user:password@host/db").text).toBe(
      "psql postgres://user:[REDACTED:url_credentials]@host/db"
    )
    expect(redactSecrets("https://me:p@ss:w@host/x").text).toBe("https://me:[REDACTED:url_credentials]@host/x")
  })

  it("redacts every assignment form of a secret name, keeping the name", () => {
    const forms: ReadonlyArray<readonly [string, string]> = [
      ["auth_token=Fake0123456789ab", "auth_token=[REDACTED:keyed_value]"],
      ["auth_token: Fake0123456789ab", "auth_token: [REDACTED:keyed_value]"],
      ['"auth_token": "Fake0123456789ab"', '"auth_token": "[REDACTED:keyed_value]"'],
      ["'auth_token' => 'Fake0123456789ab'", "'auth_token' => '[REDACTED:keyed_value]'"],
      ['authToken := "Fake0123456789ab"', 'authToken := "[REDACTED:keyed_value]"'],
      ["export AUTH_TOKEN=Fake0123456789ab", "export AUTH_TOKEN=[REDACTED:keyed_value]"],
      ['{\\"auth_token\\": \\"Fake0123456789ab\\"}', '{\\"auth_token\\": \\"[REDACTED:keyed_value]\\"}'],
      ["--auth-token=Fake0123456789ab", "--auth-token=[REDACTED:keyed_value]"],
      ["--auth-token Fake0123456789ab", "--auth-token [REDACTED:keyed_value]"],
      ["PGPASSWORD=fakepw psql", "PGPASSWORD=[REDACTED:keyed_value] psql"],
      ["passwd: fake-pw-1", "passwd: [REDACTED:keyed_value]"],
      ["pwd = 'fakepw'", "pwd = '[REDACTED:keyed_value]'"],
      ["apikey=Fake0123456789", "apikey=[REDACTED:keyed_value]"],
      ["access_key: Fake0123456789", "access_key: [REDACTED:keyed_value]"],
      ["auth=Fake0123456789", "auth=[REDACTED:keyed_value]"],
      ["key=FakeKey0123456789abcdef", "key=[REDACTED:keyed_value]"]
    ]
    for (const [text, expected] of forms) expect(redactSecrets(text).text, text).toBe(expected)
  })

  it("takes values after secret names only when they look like credentials", () => {
    const kept = [
      "token: 4096",
      "auth: true",
      "key: user-42",
      "token = nextPageToken",
      "password = getpass.getpass()",
      "api_key = os.environ['API_KEY']",
      "secret_name: prod-db",
      "token_url: https://oauth2.googleapis.com/token",
      "access_key_id = AKIA_IS_REDACTED_ELSEWHERE",
      "password: Optional[str] = None"
    ]
    for (const text of kept) expect(redactSecrets(text).text, text).toBe(text)
  })

  it("stays linear on adversarial input: 1 MB strings built to make patterns backtrack are processed", () => {
    const MB = 1024 * 1024
    const fill = (unit: string) => unit.repeat(Math.ceil(MB / unit.length)).slice(0, MB)
    const inputs = [
      fill("a"),
      fill(`eyJ${"A".repeat(20_000)}.`),
      fill(`${"token=".repeat(26)} `),
      fill(`${"key:".repeat(39)} `),
      fill(`"password": "${"x".repeat(100)}`),
      fill("-----BEGIN RSA PRIVATE KEY-----"),
      fill("-----BEGIN PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n"),
      fill(`ab://u:${"@".repeat(500)} `),
      fill(`ab://${"u".repeat(300)}@`),
      `Bearer ${fill("A")}`,
      fill(`AC0123456789abcdef0123456789abcdef${"x".repeat(79)}`),
      fill(`machine host ${"x".repeat(290)} `),
      fill("name: a\n value: "),
      fill("Authorization: token "),
      fill('token: "\\'),
      fill('password="a\\"b token: eyJx.y Bearer sk_live_ -----BEGIN  AC:// '),
      fill("MTA0MjE1NjMxMjM0NTY3ODkw.Gq0abc."),
      fill(`MTA0MjE1NjMxMjM0NTY3ODkw.Gq0abc.${"a".repeat(39)}.`),
      fill("discord.com/api/webhooks/123456789012345678/"),
      fill("LS0tLS1CRUdJTi "),
      fill(`LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQ${"A".repeat(60)}\n`)
    ]
    for (const input of inputs) {
      const result = redactSecrets(input)
      expect(typeof result.text).toBe("string")
      expect(redactSecrets(result.text).total).toBe(0)
    }
  }, 120_000)

  it("is idempotent: redacting redacted text changes nothing", () => {
    const once = redactSecrets("password=hunter2hunter2 and ghp_0123456789abcdefghijABCDEFGHIJ012345")
    const twice = redactSecrets(once.text)
    expect(twice.text).toBe(once.text)
    expect(twice.total).toBe(0)
  })
})

describe("Discord tokens and base64-encoded private keys", () => {
  it("redacts a bot token, an older user token and webhook URLs, keeping the text around them", () => {
    const bot = "MTA0MjE1NjMxMjM0NTY3ODkw.Gq0abc.abcdefghijklmnopqrstuvwxyz0123456789AB"
    expect(redactSecrets(`token ${bot}, then`)).toEqual({
      text: "token [REDACTED:discord_token], then",
      counts: { discord_token: 1 },
      total: 1
    })
    const old = "NDI0MjQyNDI0MjQyNDI0MjQy.DaBcDe.0123456789abcdefghijklmnopq"
    expect(redactSecrets(old).text).toBe("[REDACTED:discord_token]")
    const hook = `https://discordapp.com/api/webhooks/123456789012345678/${"aB3-_".repeat(13)}xyz`
    expect(redactSecrets(`post to ${hook} now`).text).toBe(
      "post to https://discordapp.com/api/webhooks/[REDACTED:discord_webhook] now"
    )
  })

  it("keeps dotted names and ids that only look like a Discord token", () => {
    for (const text of [
      "MTA0MjE1NjMxMjM0NTY3ODkwX.Gq0abc.abcdefghijklmnopqrstuvwxyz0123456789AB.more",
      "NotDigitsButLongEnough12.abcdef.abcdefghijklmnopqrstuvwxyz0123456789AB",
      "MTA0MjE1NjMxMjM0NTY3ODkw.short.abcdefghijklmnopqrstuvwxyz0123456789AB",
      "https://discord.com/api/webhooks/123/abc"
    ]) {
      expect(redactSecrets(text).text).toBe(text)
    }
  })

  it("redacts a base64-encoded private key whole, on one line, wrapped, or in JSON escapes", () => {
    const pem =
      "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBase64EcKeyForTests0123456789abcdefghijklmnop\n-----END EC PRIVATE KEY-----\n"
    const b64 = Buffer.from(pem).toString("base64")
    expect(redactSecrets(`key: ${b64}\nnext: line`).text).toBe("key: [REDACTED:private_key]\nnext: line")
    const wrapped = (b64.match(/.{1,64}/g) ?? []).join("\n")
    expect(redactSecrets(`before\n${wrapped}\nafter`).text).toBe("before\n[REDACTED:private_key]\nafter")
    const escaped = (b64.match(/.{1,64}/g) ?? []).join("\\n")
    expect(redactSecrets(`{"k":"${escaped}"}`).text).toBe('{"k":"[REDACTED:private_key]"}')
    const indented = (b64.match(/.{1,64}/g) ?? []).join("\n    ")
    expect(redactSecrets(`  tls.pem: |\n    ${indented}\n  other: x`).text).toBe(
      "  tls.pem: |\n    [REDACTED:private_key]\n  other: x"
    )
  })

  it("keeps base64 of a certificate or a public key, and the prefix named in prose", () => {
    for (const pem of [
      "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUFakeCertificate0123456789abcdef\n-----END CERTIFICATE-----\n",
      "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEFakePublicKey0123456789\n-----END PUBLIC KEY-----\n"
    ]) {
      const text = `value ${Buffer.from(pem).toString("base64")} end`
      expect(redactSecrets(text).text).toBe(text)
    }
    expect(redactSecrets("grep LS0tLS1CRUdJTi in the manifests").total).toBe(0)
  })
})
