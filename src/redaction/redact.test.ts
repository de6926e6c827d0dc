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
  { name: "quoted token", text: "GITLAB_TOKEN='glpat-xxxxxxxxxxxx'", secret: "glpat-xxxxxxxxxxxx" },
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

  it("is idempotent: redacting redacted text changes nothing", () => {
    const once = redactSecrets("password=hunter2hunter2 and ghp_0123456789abcdefghijABCDEFGHIJ012345")
    const twice = redactSecrets(once.text)
    expect(twice.text).toBe(once.text)
    expect(twice.total).toBe(0)
  })
})
