/**
 * The secret corpus: the shapes of credential people paste into a coding session, each embedded in
 * the kind of text it arrives in, with the substrings that must never be stored. Every value is
 * fake (it says so, or is a run of sequential digits) but has the exact shape of the real thing.
 * Used by the unit test of `redactSecrets` and by the acceptance test that indexes it end to end.
 */

export interface SecretSample {
  /** One shape of secret; several samples may share it (one per context it arrives in). */
  readonly shape: string
  readonly family: string
  /** `message`: text of a message; `cwd`: the session's working directory (shown as `project`). */
  readonly where: "message" | "cwd"
  readonly text: string
  /** Substrings that must not survive redaction. */
  readonly secrets: ReadonlyArray<string>
  /**
   * The redaction rules version that first redacted this shape (1 when absent): a database of an
   * older version holds it as it was written, until the daemon redacts it again.
   */
  readonly since?: number
}

export interface NegativeSample {
  readonly name: string
  /** Text that must come out of redaction unchanged. */
  readonly text: string
}

const JWT_HS256 =
  "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJmYWtlLXVzZXItMDAwMSIsIm5hbWUiOiJGYWtlIEV4YW1wbGUgVXNlciIsImlhdCI6MTcwMDAwMDAwMH0.ZmFrZS1zaWduYXR1cmUtZm9yLXRlc3RzLW9ubHktMDAwMQ"
const JWT_RS256 =
  "eyJhbGciOiJSUzI1NiIsImtpZCI6ImZha2Uta2V5LTEifQ.eyJpc3MiOiJodHRwczovL2FjY291bnRzLmV4YW1wbGUudGVzdCIsImF1ZCI6ImZha2UtY2xpZW50IiwiZXhwIjoxOTAwMDAwMDAwfQ.ZmFrZS1yczI1Ni1zaWduYXR1cmUtZm9yLXRlc3RzLW9ubHktMDAwMg"
const JWT_UNSIGNED = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJmYWtlLXVuc2lnbmVkLTAwMDMiLCJyb2xlIjoiYWRtaW4ifQ."
const JWT_CWD = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJmYWtlLWN3ZC0wMDA0In0.ZmFrZS1jd2Qtc2lnbmF0dXJlLTAwMDQ"

const AZURE_ACCOUNT_KEY = "ZmFrZS1henVyZS1zdG9yYWdlLWFjY291bnQta2V5LWZvci10ZXN0cy1vbmx5LTAwMDAwMDAwMDAwMDAwMA=="
const AZURE_BUS_KEY = "ZmFrZS1zZXJ2aWNlLWJ1cy1rZXktZm9yLXRlc3RzLTAwMDE="
const AZURE_SAS_SIG = "FAKEsig0123456789abcdEFGH%2BfakeFAKE%2Fxyz%3D"
const AZURE_SAS_URL_SIG = "FakeUrlSig0123456789ABCDEFfake%2Bfake%3D"

const TWILIO_SID = "AC0123456789abcdef0123456789abcdef"
const TWILIO_AUTH = "fa4efa4e0123456789abcdef01234567"

/** Discord tokens: the base64 of a user id (digits), a 6-character timestamp, an HMAC (27 or 38). */
const DISCORD_BOT = "MTEyMjMzNDQ1NTY2Nzc4ODk5.GFake0.FakeDiscordBotHmac0123456789abcdefGHIJ"
const DISCORD_OLD_USER = "MTIzNDU2Nzg5MDEyMzQ1Njc.XFake1.FakeOldUserHmac0123456789ab"
const DISCORD_NEW_ID = "OTg3NjU0MzIxMDk4NzY1NDMyMQ.GaKe2x.FakeDiscordNewHmac0123456789abcdefGHIJ"
const DISCORD_HOOK_TOKEN = "FakeDiscordWebhookToken0123456789abcdefGHIJKLMNOPqrstuvwxyz_-0123456"
const DISCORD_CWD = "NDI0MjQyNDI0MjQyNDI0MjQyNA.GFake3.FakeDiscordCwdHmac0123456789abcdefGHIJ"
const DISCORD_APP_HOOK_TOKEN = "FakeDiscordAppHook0123456789abcdefGHIJKLMNOPqrstuvwxyz-_abcdefghijkl"

/** PEM private keys base64-encoded whole (Kubernetes secrets, environment variables). */
const B64_RSA_KEY =
  "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVBZmFrZUJhc2U2NFJzYUtleUxpbmUwMDAxZm9yVGVzdHNPbmx5MDEyMzQ1Njc4OWFiY2RlZgpGYWtlQmFzZTY0UnNhS2V5TGluZTAwMDJmb3JUZXN0c09ubHkwMTIzNDU2Nzg5YWJjZGVmR0hJSktMTU5PUD09Ci0tLS0tRU5EIFJTQSBQUklWQVRFIEtFWS0tLS0tCg=="
const B64_PKCS8_LINES = [
  "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2UUlCQURBTkJna3Foa2lHOXcwQkFRRUZB",
  "QVNDRmFrZVdyYXBwZWRQa2NzOExpbmUwMDAxYWJjZGVmZ2hpagpGYWtlV3JhcHBlZFBrY3M4TGlu",
  "ZTAwMDJmb3JUZXN0c09ubHkwMTIzNDU2Nzg5QUJDREVGR0hJSktMTU5PUFFSCkZha2VXcmFwcGVk",
  "UGtjczhMaW5lMDAwM2ZvclRlc3RzT25seTAxMjM0NTY3ODlhYmNkZWZnaGlqa2xtbm9wPT0KLS0t",
  "LS1FTkQgUFJJVkFURSBLRVktLS0tLQo="
]
const B64_OPENSSH_KEY =
  "LS0tLS1CRUdJTiBPUEVOU1NIIFBSSVZBVEUgS0VZLS0tLS0KYjNCbGJuTnphQzFyWlhrdGRqRUFBQUFBQkc1dmJtVUFBQUFFYm05dVpRRmFrZUI2NE9wZW5TU0hMaW5lMDAwMXh5egotLS0tLUVORCBPUEVOU1NIIFBSSVZBVEUgS0VZLS0tLS0K"
/** A certificate, base64-encoded the same way: public, so it stays. */
const B64_CERTIFICATE =
  "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSURkekNDQWwrZ0F3SUJBZ0lFQWdBQXVUQU5CZ2txaGtpRzl3MEJBUVVGQURCYU1Rc3dDUVlEVlFRR0V3SkoKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="

export const SECRET_CORPUS: ReadonlyArray<SecretSample> = [
  // ---- JSON Web Tokens ----
  {
    shape: "jwt in an Authorization header",
    family: "jwt",
    where: "message",
    text: `The API answers 401; I ran curl -H 'Authorization: Bearer ${JWT_HS256}' https://api.example.test/v1/me and it still fails.`,
    secrets: [JWT_HS256]
  },
  {
    shape: "jwt in JSON",
    family: "jwt",
    where: "message",
    text: `The login response was {"id_token":"${JWT_RS256}","expires_in":3600} so the client should cache it.`,
    secrets: [JWT_RS256]
  },
  {
    shape: "unsigned jwt in prose",
    family: "jwt",
    where: "message",
    text: `Decoding ${JWT_UNSIGNED} shows alg none, which the verifier must reject.`,
    secrets: [JWT_UNSIGNED.replace(/\.$/, "")]
  },

  // ---- credentials in URLs ----
  {
    shape: "postgres URL",
    family: "url credentials",
    where: "message",
    text: "Set DATABASE_URL=postgres://shop:FakePgPass2024@db.internal.example:5432/shop and restart the worker.",
    secrets: ["FakePgPass2024"]
  },
  {
    shape: "mysql URL",
    family: "url credentials",
    where: "message",
    text: "The old config used mysql://root:Fake-MySQL-Pw99@127.0.0.1:3306/legacy for the reports job.",
    secrets: ["Fake-MySQL-Pw99"]
  },
  {
    shape: "mongodb+srv URL",
    family: "url credentials",
    where: "message",
    text: 'const uri = "mongodb+srv://admin:FakeMongo%40Pass77@cluster0.fake01.mongodb.net/?retryWrites=true"',
    secrets: ["FakeMongo%40Pass77", "FakeMongo"]
  },
  {
    shape: "redis URL without a user",
    family: "url credentials",
    where: "message",
    text: "Point the cache at redis://:fakeRedisPw123@cache.internal.example:6379/0 in staging.",
    secrets: ["fakeRedisPw123"]
  },
  {
    shape: "amqps URL",
    family: "url credentials",
    where: "message",
    text: "Broker: amqps://events:FakeRabbit0042@mq.example.test:5671/prod (rotated monthly).",
    secrets: ["FakeRabbit0042"]
  },
  {
    shape: "git remote with an access token as password",
    family: "url credentials",
    where: "message",
    text: "git remote set-url origin https://x-access-token:FakeGitAccess0123456789xyz@git.example.test/acme/api.git",
    secrets: ["FakeGitAccess0123456789xyz"]
  },
  {
    shape: "token as URL userinfo",
    family: "url credentials",
    where: "message",
    text: "Clone with https://fake0123456789abcdef0123456789abcdef0123@git.example.test/acme/tools.git then build.",
    secrets: ["fake0123456789abcdef0123456789abcdef0123"]
  },

  // ---- Stripe ----
  {
    shape: "stripe sk_live",
    family: "stripe",
    where: "message",
    text: "Production charges fail; the key in the dashboard is sk_live_51FakeLiveKey0123456789abcdefGHIJKLmnop and it was rolled yesterday.",
    secrets: ["sk_live_51FakeLiveKey0123456789abcdefGHIJKLmnop"]
  },
  {
    shape: "stripe sk_test",
    family: "stripe",
    where: "message",
    text: 'stripe.api_key = "sk_test_51FakeTestKey0123456789abcdefGHIJKLmnop"',
    secrets: ["sk_test_51FakeTestKey0123456789abcdefGHIJKLmnop"]
  },
  {
    shape: "stripe rk_live",
    family: "stripe",
    where: "message",
    text: "The read-only restricted key rk_live_51FakeRestricted0123456789abcdefGHIJ goes to the analytics box.",
    secrets: ["rk_live_51FakeRestricted0123456789abcdefGHIJ"]
  },
  {
    shape: "stripe rk_test",
    family: "stripe",
    where: "message",
    text: "For CI use rk_test_51FakeRestrictedTest0123456789abcdef instead.",
    secrets: ["rk_test_51FakeRestrictedTest0123456789abcdef"]
  },
  {
    shape: "stripe webhook secret",
    family: "stripe",
    where: "message",
    text: "STRIPE_WEBHOOK_SECRET=whsec_FakeWebhookSecret0123456789abcdefGH\nSTRIPE_MODE=live",
    secrets: ["whsec_FakeWebhookSecret0123456789abcdefGH"]
  },

  // ---- npm ----
  {
    shape: "npm token",
    family: "npm",
    where: "message",
    text: "Publishing failed with E401 although NPM_TOKEN is npm_FakeNpmToken0123456789abcdefGHIJKLMN set in the CI secrets.",
    secrets: ["npm_FakeNpmToken0123456789abcdefGHIJKLMN"]
  },
  {
    shape: ".npmrc _authToken with an npm token",
    family: "npm",
    where: "message",
    text: "My ~/.npmrc has:\n//registry.npmjs.org/:_authToken=npm_FakeRcToken00123456789abcdefGHIJKLMN\nsave-exact=true",
    secrets: ["npm_FakeRcToken00123456789abcdefGHIJKLMN"]
  },
  {
    shape: ".npmrc _authToken with a legacy token",
    family: "npm",
    where: "message",
    text: "@acme:registry=https://npm.example.test/\n//npm.example.test/:_authToken=12345678-90ab-4cde-8f01-234567890abc\nalways-auth=true",
    secrets: ["12345678-90ab-4cde-8f01-234567890abc"]
  },
  {
    shape: ".npmrc _auth",
    family: "npm",
    where: "message",
    text: "The legacy registry wants basic auth: _auth=ZmFrZXVzZXI6RmFrZU5wbVBhc3M0Mg== in the project .npmrc.",
    secrets: ["ZmFrZXVzZXI6RmFrZU5wbVBhc3M0Mg"]
  },

  // ---- Google OAuth ----
  {
    shape: "google access token (ya29)",
    family: "google oauth",
    where: "message",
    text: "gcloud auth print-access-token gave ya29.a0FakeAccessToken0123456789abcdefGHIJKLmnopQRSTuvwx_yz and the request worked.",
    secrets: ["a0FakeAccessToken0123456789abcdefGHIJKLmnopQRSTuvwx_yz"]
  },
  {
    shape: "google client secret (GOCSPX)",
    family: "google oauth",
    where: "message",
    text: '{"web":{"client_id":"123456789012-fake.apps.googleusercontent.com","client_secret":"GOCSPX-FakeGoogleSecret0123456789ab"}}',
    secrets: ["GOCSPX-FakeGoogleSecret0123456789ab", "FakeGoogleSecret0123456789ab"]
  },
  {
    shape: "google refresh token (1//)",
    family: "google oauth",
    where: "message",
    text: "The refresh token 1//0gFakeRefreshToken0123456789abcdefGHIJKLMNOPqrstuv-WXyz is stored in token.json.",
    secrets: ["0gFakeRefreshToken0123456789abcdefGHIJKLMNOPqrstuv"]
  },
  {
    shape: "google refresh token in JSON",
    family: "google oauth",
    where: "message",
    text: '{"refresh_token": "1//04FakeRefreshJson0123456789abcdefGHIJKLMNOPqrst", "token_uri": "https://oauth2.googleapis.com/token"}',
    secrets: ["04FakeRefreshJson0123456789abcdefGHIJKLMNOPqrst"]
  },

  // ---- Azure ----
  {
    shape: "azure storage connection string (AccountKey)",
    family: "azure",
    where: "message",
    text: `AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=https;AccountName=fakeacct;AccountKey=${AZURE_ACCOUNT_KEY};EndpointSuffix=core.windows.net"`,
    secrets: [AZURE_ACCOUNT_KEY, "ZmFrZS1henVyZS1zdG9yYWdlLWFjY291bnQta2V5LWZvci10ZXN0cy1vbmx5LTAwMDAwMDAwMDAwMDAwMA"]
  },
  {
    shape: "azure service bus connection string (SharedAccessKey)",
    family: "azure",
    where: "message",
    text: `Endpoint=sb://fake-ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=${AZURE_BUS_KEY}`,
    secrets: [AZURE_BUS_KEY, "ZmFrZS1zZXJ2aWNlLWJ1cy1rZXktZm9yLXRlc3RzLTAwMDE"]
  },
  {
    shape: "azure SAS connection string (SharedAccessSignature)",
    family: "azure",
    where: "message",
    text: `BlobEndpoint=https://fakeacct.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&srt=sco&sp=rl&se=2030-01-01T00:00:00Z&sig=${AZURE_SAS_SIG}`,
    secrets: [AZURE_SAS_SIG, "FAKEsig0123456789abcdEFGH"]
  },
  {
    shape: "azure SAS URL (sig=)",
    family: "azure",
    where: "message",
    text: `Download it from https://fakeacct.blob.core.windows.net/backups/db.bak?sv=2022-11-02&sr=b&sp=r&se=2030-01-01T00%3A00%3A00Z&sig=${AZURE_SAS_URL_SIG} before it expires.`,
    secrets: [AZURE_SAS_URL_SIG, "FakeUrlSig0123456789ABCDEFfake"]
  },
  {
    shape: "azure AD client secret",
    family: "azure",
    where: "message",
    text: "The app registration secret is Fak8Q~FakeClientSecret0123456789abcdefGH and expires in 24 months.",
    secrets: ["Fak8Q~FakeClientSecret0123456789abcdefGH", "FakeClientSecret0123456789abcdefGH"]
  },

  // ---- Twilio ----
  {
    shape: "twilio API key (SK)",
    family: "twilio",
    where: "message",
    text: "Create the client with the API key SK0123456789abcdef0123456789abcdef and its secret from the console.",
    secrets: ["SK0123456789abcdef0123456789abcdef"]
  },
  {
    shape: "twilio account SID with its auth token",
    family: "twilio",
    where: "message",
    text: `from twilio.rest import Client\nclient = Client("${TWILIO_SID}", "${TWILIO_AUTH}")`,
    secrets: [TWILIO_AUTH, TWILIO_SID]
  },
  {
    shape: "twilio auth token in env",
    family: "twilio",
    where: "message",
    text: "TWILIO_ACCOUNT_SID=AC00112233445566778899aabbccddeeff\nTWILIO_AUTH_TOKEN=0123456789abcdeffedcba9876543210",
    secrets: ["0123456789abcdeffedcba9876543210"]
  },

  // ---- private keys ----
  {
    shape: "RSA private key",
    family: "private key",
    where: "message",
    text: "Here is the deploy key, is the format right?\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAfakeRSAkeyMaterialLine0001forTestsOnly0123456789\nFakeRSAkeyMaterialLine0002forTestsOnly0123456789abcdefGHIJKL==\n-----END RSA PRIVATE KEY-----\nIt fails with invalid format.",
    secrets: ["MIIEowIBAAKCAQEAfakeRSAkeyMaterialLine0001forTestsOnly0123456789", "FakeRSAkeyMaterialLine0002"]
  },
  {
    shape: "OpenSSH private key",
    family: "private key",
    where: "message",
    text: "cat ~/.ssh/id_ed25519 prints:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQFakeOpenSSHLine0001\nQyNTUxOQAAACBFakeOpenSSHLine0002forTestsOnly0123456789abcd\n-----END OPENSSH PRIVATE KEY-----",
    secrets: ["b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQFakeOpenSSHLine0001", "FakeOpenSSHLine0002"]
  },
  {
    shape: "encrypted PKCS#8 private key",
    family: "private key",
    where: "message",
    text: "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqFakeEncryptedLine0001abcdef\nFakeEncryptedLine0002forTestsOnly0123456789ABCDEFGHIJ=\n-----END ENCRYPTED PRIVATE KEY-----\nThe passphrase is in the vault.",
    secrets: ["MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqFakeEncryptedLine0001abcdef", "FakeEncryptedLine0002"]
  },
  {
    shape: "PGP private key block",
    family: "private key",
    where: "message",
    text: "gpg --armor --export-secret-keys gave\n-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGFakePGPLine0001forTestsOnly0123456789abcdefGHIJKLMN\nFakePGPLine0002forTestsOnly0123456789abcdefGHIJKLMNOPqr\n=FaKe\n-----END PGP PRIVATE KEY BLOCK-----",
    secrets: ["lQOYBGFakePGPLine0001forTestsOnly0123456789abcdefGHIJKLMN", "FakePGPLine0002"]
  },
  {
    shape: "EC private key",
    family: "private key",
    where: "message",
    text: "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIFakeECLine0001forTestsOnly0123456789abcdefGHIJoAoGCCqGSM49\n-----END EC PRIVATE KEY-----",
    secrets: ["MHcCAQEEIFakeECLine0001forTestsOnly0123456789abcdefGHIJoAoGCCqGSM49"]
  },
  {
    shape: "private key inside a service-account JSON",
    family: "private key",
    where: "message",
    text: '{"type": "service_account", "private_key_id": "fa4e1d00fa4e1d01", "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCFakeJsonKeyLine0001abcdef\\nFakeJsonKeyLine0002forTestsOnly0123456789==\\n-----END PRIVATE KEY-----\\n", "client_email": "fake@fake-project.iam.gserviceaccount.com"}',
    secrets: ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASCFakeJsonKeyLine0001abcdef", "FakeJsonKeyLine0002"]
  },
  {
    shape: "truncated private key paste",
    family: "private key",
    where: "message",
    text: "The log cut it off:\n-----BEGIN PRIVATE KEY-----\nMIIEvgIBADANBgkqhkiG9w0BAQEFAASCFakeTruncatedLine0001abc\nFakeTruncatedLine0002forTestsOnly0123456789\n\nWhat should I do with it?",
    secrets: ["MIIEvgIBADANBgkqhkiG9w0BAQEFAASCFakeTruncatedLine0001abc", "FakeTruncatedLine0002"]
  },

  {
    shape: "base64-encoded private key in a Kubernetes secret",
    family: "private key",
    where: "message",
    text: `apiVersion: v1\nkind: Secret\ntype: Opaque\ndata:\n  signing.pem: ${B64_RSA_KEY}\n  mode: cHJvZA==`,
    secrets: [B64_RSA_KEY, B64_RSA_KEY.replace(/=+$/, "")],
    since: 2
  },
  {
    shape: "base64-encoded private key wrapped at 76 columns",
    family: "private key",
    where: "message",
    text: `base64 -w 76 < key.pem printed\n${B64_PKCS8_LINES.join("\n")}\nand I pasted that into the vault.`,
    secrets: B64_PKCS8_LINES.map((l) => l.replace(/=+$/, "")),
    since: 2
  },
  {
    shape: "base64-encoded private key in prose",
    family: "private key",
    where: "message",
    text: `The deploy job decodes ${B64_OPENSSH_KEY} into ~/.ssh/id_ed25519 before cloning.`,
    secrets: [B64_OPENSSH_KEY],
    since: 2
  },

  // ---- values assigned to secret names ----
  {
    shape: "token=value",
    family: "keyed value",
    where: "message",
    text: "Run it as ACCESS_TOKEN=FakeAccess0123456789tok ./sync.sh from the repo root.",
    secrets: ["FakeAccess0123456789tok"]
  },
  {
    shape: "secret: value (YAML)",
    family: "keyed value",
    where: "message",
    text: "config/prod.yaml:\n  session_secret: FakeSessionSecret0123456789\n  log_level: info",
    secrets: ["FakeSessionSecret0123456789"]
  },
  {
    shape: '"password": "value" (JSON)',
    family: "keyed value",
    where: "message",
    text: 'The seed file has {"username": "admin", "password": "Fake-Admin-Pw-2024!"} for the first login.',
    secrets: ["Fake-Admin-Pw-2024!", "Fake-Admin-Pw-2024"]
  },
  {
    shape: "password: lone word (YAML)",
    family: "keyed value",
    where: "message",
    text: "database:\n  user: app\n  password: fakeswordfishword\n  host: db.internal.example",
    secrets: ["fakeswordfishword"]
  },
  {
    shape: "export NAME=value",
    family: "keyed value",
    where: "message",
    text: "Add this to your shell profile:\nexport ACME_API_KEY=FakeAcmeApiKey0123456789abcdef\nthen open a new terminal.",
    secrets: ["FakeAcmeApiKey0123456789abcdef"]
  },
  {
    shape: "env file lines",
    family: "keyed value",
    where: "message",
    text: ".env.production:\nDB_PASSWD=FakeDbPasswd0042\nSMTP_PWD=FakeSmtpPwd0043\nMAPS_APIKEY=FakeMapsApiKey0123456789\nS3_ACCESS_KEY=FakeS3AccessKey0123456789\nNODE_ENV=production",
    secrets: ["FakeDbPasswd0042", "FakeSmtpPwd0043", "FakeMapsApiKey0123456789", "FakeS3AccessKey0123456789"]
  },
  {
    shape: "client_secret in Python",
    family: "keyed value",
    where: "message",
    text: 'oauth = OAuth2Session(client_id="fake-client", client_secret="FakeOauthClientSecret0123456789")',
    secrets: ["FakeOauthClientSecret0123456789"]
  },
  {
    shape: "auth header value",
    family: "keyed value",
    where: "message",
    text: "The webhook sends X-Auth: FakeAuthHeader0123456789abcdef with every call.",
    secrets: ["FakeAuthHeader0123456789abcdef"]
  },
  {
    shape: "key with a random value",
    family: "keyed value",
    where: "message",
    text: 'settings.py: SECRET_KEY = "FakeDjangoSecretKey0123456789abcdefGHIJ" and DEBUG = False',
    secrets: ["FakeDjangoSecretKey0123456789abcdefGHIJ"]
  },
  {
    shape: "key: strongly random value",
    family: "keyed value",
    where: "message",
    text: "license:\n  key: FAKE0042-7E57-L1CE-N5E0-KEY000000042\n  seats: 5",
    secrets: ["FAKE0042-7E57-L1CE-N5E0-KEY000000042"]
  },
  {
    shape: "URL query parameter",
    family: "keyed value",
    where: "message",
    text: "The callback was https://app.example.test/cb?state=xyz&access_token=FakeQueryToken0123456789abc&expires_in=3600",
    secrets: ["FakeQueryToken0123456789abc"]
  },
  {
    shape: "command-line flag",
    family: "keyed value",
    where: "message",
    text: "docker login registry.example.test --username deploy --password Fake-Registry-Pw-77",
    secrets: ["Fake-Registry-Pw-77"]
  },
  {
    shape: "ADO.NET connection string",
    family: "keyed value",
    where: "message",
    text: "Server=tcp:fake.database.windows.net,1433;Database=shop;User ID=admin;Password=FakeSqlPw0123!;Encrypt=True",
    secrets: ["FakeSqlPw0123!", "FakeSqlPw0123"]
  },
  {
    shape: "kubernetes env value",
    family: "keyed value",
    where: "message",
    text: "env:\n  - name: DB_PASSWORD\n    value: FakeKubePass0123\n  - name: LOG_LEVEL\n    value: info",
    secrets: ["FakeKubePass0123"]
  },
  {
    shape: ".netrc password",
    family: "keyed value",
    where: "message",
    text: "machine api.example.test\n  login deploy\n  password FakeNetrcPw0123",
    secrets: ["FakeNetrcPw0123"]
  },
  {
    shape: "Cookie header",
    family: "keyed value",
    where: "message",
    text: "curl -H 'Cookie: sessionid=FakeSessionCookie0123456789; csrftoken=FakeCsrf0123456789' https://app.example.test/",
    secrets: ["FakeSessionCookie0123456789", "FakeCsrf0123456789"]
  },
  {
    shape: "Basic credentials",
    family: "keyed value",
    where: "message",
    text: "The proxy expects Proxy-Authorization: Basic ZmFrZXVzZXI6RmFrZVByb3h5UHcwMQ== on every request.",
    secrets: ["ZmFrZXVzZXI6RmFrZVByb3h5UHcwMQ"]
  },

  // ---- Discord ----
  {
    shape: "Discord bot token in code",
    family: "discord",
    where: "message",
    text: `client.login("${DISCORD_BOT}") fails with 4004 Authentication failed.`,
    secrets: [DISCORD_BOT, "FakeDiscordBotHmac0123456789abcdefGHIJ"],
    since: 2
  },
  {
    shape: "older Discord user token in prose",
    family: "discord",
    where: "message",
    text: `The self-bot used ${DISCORD_OLD_USER} until the password reset.`,
    secrets: [DISCORD_OLD_USER, "FakeOldUserHmac0123456789ab"],
    since: 2
  },
  {
    shape: "Discord token of a 19-digit id in a log",
    family: "discord",
    where: "message",
    text: `[gateway] IDENTIFY {"op":2,"d":{"token":"${DISCORD_NEW_ID}","intents":513}}`,
    secrets: [DISCORD_NEW_ID, "FakeDiscordNewHmac0123456789abcdefGHIJ"],
    since: 2
  },
  {
    shape: "Discord webhook URL",
    family: "discord",
    where: "message",
    text: `Alerts post to https://discord.com/api/webhooks/1104215631234567890/${DISCORD_HOOK_TOKEN} from the cron job.`,
    secrets: [DISCORD_HOOK_TOKEN, "FakeDiscordWebhookToken0123456789abcdefGHIJKLMNOPqrstuvwxyz"],
    since: 2
  },
  {
    shape: "discordapp.com webhook URL",
    family: "discord",
    where: "message",
    text: `curl -X POST -d '{"content":"deployed"}' https://canary.discordapp.com/api/v10/webhooks/987654321098765432/${DISCORD_APP_HOOK_TOKEN}`,
    secrets: [DISCORD_APP_HOOK_TOKEN, "FakeDiscordAppHook0123456789abcdefGHIJKLMNOPqrstuvwxyz"],
    since: 2
  },

  // ---- other provider tokens ----
  {
    shape: "GitHub token",
    family: "provider token",
    where: "message",
    text: "gh auth status shows ghp_FakeGitHubToken0123456789abcdefGHIJ as the active token.",
    secrets: ["ghp_FakeGitHubToken0123456789abcdefGHIJ"]
  },
  {
    shape: "AWS access key id",
    family: "provider token",
    where: "message",
    text: "[default]\naws_access_key_id = AKIAFAKE0123456789AB\naws_secret_access_key = FakeAwsSecret0123456789abcdefGHIJKLmnopqr",
    secrets: ["AKIAFAKE0123456789AB", "FakeAwsSecret0123456789abcdefGHIJKLmnopqr"]
  },
  {
    shape: "Slack token",
    family: "provider token",
    where: "message",
    text: "The bot token xoxb-0123456789-0123456789-FakeSlackBotToken is in the vault.",
    secrets: ["xoxb-0123456789-0123456789-FakeSlackBotToken", "FakeSlackBotToken"]
  },
  {
    shape: "OpenAI key",
    family: "provider token",
    where: "message",
    text: "OPENAI_API_KEY is sk-proj-FakeOpenAiKey0123456789abcdefGHIJ for this repo.",
    secrets: ["sk-proj-FakeOpenAiKey0123456789abcdefGHIJ", "FakeOpenAiKey0123456789abcdefGHIJ"]
  },

  // ---- secrets inside the session's working directory ----
  {
    shape: "GitHub token in the working directory",
    family: "metadata",
    where: "cwd",
    text: "/home/dev/clones/ghp_FakeCwdGitHub0123456789abcdefGHIJKL/api",
    secrets: ["ghp_FakeCwdGitHub0123456789abcdefGHIJKL", "FakeCwdGitHub0123456789abcdefGHIJKL"]
  },
  {
    shape: "npm token in the working directory",
    family: "metadata",
    where: "cwd",
    text: "/tmp/publish-npm_FakeCwdNpmToken0123456789abcdefGHIJK/pkg",
    secrets: ["npm_FakeCwdNpmToken0123456789abcdefGHIJK", "FakeCwdNpmToken0123456789abcdefGHIJK"]
  },
  {
    shape: "Stripe key in the working directory",
    family: "metadata",
    where: "cwd",
    text: "/srv/checkout/sk_live_51FakeCwdStripe0123456789abcdef",
    secrets: ["sk_live_51FakeCwdStripe0123456789abcdef", "51FakeCwdStripe0123456789abcdef"]
  },
  {
    shape: "JWT in the working directory",
    family: "metadata",
    where: "cwd",
    text: `/home/dev/debug/${JWT_CWD}`,
    secrets: [JWT_CWD]
  },
  {
    shape: "token=value in the working directory",
    family: "metadata",
    where: "cwd",
    text: "/home/dev/runs/token=FakeCwdToken0123456789ab/out",
    secrets: ["FakeCwdToken0123456789ab"]
  },
  {
    shape: "Discord token in the working directory",
    family: "metadata",
    where: "cwd",
    text: `/home/dev/bots/${DISCORD_CWD}/run`,
    secrets: [DISCORD_CWD, "FakeDiscordCwdHmac0123456789abcdefGHIJ"],
    since: 2
  }
]

/** Prose and code that mention secrets without containing one: redaction must leave them alone. */
export const NEGATIVE_CORPUS: ReadonlyArray<NegativeSample> = [
  { name: "deployment prose", text: "We decided to deploy with a blue-green rollout on Friday." },
  { name: "tokenizer code", text: "const tokenizer = new Tokenizer(vocab)" },
  { name: "password advice", text: "Ask for the password in the form; never log it." },
  { name: "token counts", text: "the token count was 384 with overlap 48, and max_tokens: 4096" },
  { name: "a call returning a token", text: "const token = await getToken(request)" },
  { name: "an identifier assigned to token", text: "token = nextToken" },
  { name: "a TypeScript field type", text: "interface Login { user: string; password: string; token?: string }" },
  { name: "a pydantic field", text: 'api_key: str = Field(..., description="the API key")' },
  { name: "password rules prose", text: "Password: must be at least 12 characters long" },
  { name: "an environment variable reference", text: `Set OPENAI_API_KEY=\${OPENAI_API_KEY} in the shell first.` },
  { name: "an .npmrc variable", text: `//registry.npmjs.org/:_authToken=\${NPM_TOKEN}` },
  { name: "a CI secret reference", text: `password: \${{ secrets.DB_PASSWORD }}` },
  { name: "a member access", text: "const secret = process.env.SESSION_SECRET" },
  { name: "a placeholder", text: 'Replace "api_key": "<your-api-key>" with the real one.' },
  { name: "masked value", text: 'password: "********"' },
  { name: "key names", text: 'key: "ArrowDown" and sort_key = "created_at"' },
  { name: "tokenizer config", text: '{"eos_token": "</s>", "pad_token": "<pad>", "token_type": "Bearer"}' },
  { name: "URL without credentials", text: "Use postgres://localhost:5432/shop for local development." },
  { name: "URL with a user only", text: "Push to ssh://git@git.example.test:22/acme/api.git as usual." },
  { name: "hyphenated words after sk-", text: "the sk-learn-compatible-transformers-pipeline wrapper" },
  { name: "a PEM header in prose", text: "The header -----BEGIN OPENSSH PRIVATE KEY----- marks a private key file." },
  { name: "a commit hash", text: "Reverted 3f9a2b1c0d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a on main." },
  { name: "a UUID session id", text: "session 0199a000-0000-7000-8000-000000000000 resumed" },
  { name: "PATH export", text: "export PATH=/usr/local/bin:$PATH" },
  { name: "working directory variable", text: "PWD=/home/dev/shop-api" },
  { name: "Bearer prose", text: "The Bearer authentication scheme is described in RFC 6750." },
  { name: "Basic prose", text: "Basic configuration lives in config.toml." },
  { name: "secret prose", text: "The secret: ship small changes often." },
  { name: "a public key", text: "public_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPublicKeyIsNotSecret0123456789" },
  { name: "an author field", text: "author: Ada Lovelace" },
  { name: "destructured token", text: "const { token } = useAuth()" },
  { name: "password comparison", text: "if (password === confirmPassword) return" },
  { name: "prefixes named in prose", text: "Stripe keys start with sk_live_ or sk_test_, npm tokens with npm_." },
  { name: "npm config variable", text: "npm_config_cache=/tmp/npm npm ci" },
  { name: "Google prefix prose", text: "ya29 is the prefix of Google access tokens." },
  { name: "test results", text: "pass: 12 tests, fail: 0" },
  { name: "an assignment from another name", text: "password = db_password" },
  { name: "a flag without a value", text: "docker login --password-stdin < token.txt" },
  { name: "a URL with a password variable", text: `DATABASE_URL=postgres://app:\${DB_PASSWORD}@db:5432/app` },
  { name: "a URL with a masked password", text: "connecting to https://me:***@mirror.example/hf" },
  { name: "a test result named pass", text: 'expect(summary).toEqual({ pass: "passed", fail: "none" })' },
  { name: "a symbol key", text: 'const SecretSymbolKey = "effect/Secret"' },
  { name: "a context key path", text: 'const fnContextKey = "@effect/platform/HttpLayerRouter/MiddlewareFn"' },
  { name: "a parser token name", text: 'lastSignificantToken = "?InterpolationInTemplate"' },
  { name: "a cookie parameter", text: "export const setCookie = (cookie: Cookie): (self: Cookies) => Cookies" },
  {
    name: "an interpolated header",
    text: `headers: { token: \`Basic \${Buffer.from("user:pass").toString("base64")}\` }`
  },
  { name: "a UI label", text: 'label: visible ? "Show Password" : "Hide Password"' },
  { name: "a label string", text: 'el("label", { htmlFor: "auth_password" }, "Password:", el("code", null, "*"))' },
  { name: "a decoded password", text: "url.password = decodeURIComponent(parts.password)" },
  { name: "a minified default", text: 'n.password=r.http.basic.password??"",n.token=e.value??""' },
  { name: "a camelCase pass", text: "PassThrough.prototype._transform=function(s,o,i){i(null,s)}" },
  { name: "a base64-encoded certificate", text: `The CA bundle is ${B64_CERTIFICATE} in the config map.` },
  { name: "a PEM header in base64, in prose", text: "Base64 of a PEM starts LS0tLS1CRUdJTi, so grep for that." },
  {
    name: "a dotted name shaped like a Discord token",
    text: "NodeJSServerComponentsXYZ.config.loadEnvironmentVariablesFromFile01"
  },
  {
    name: "the Discord webhook route in docs",
    text: "POST https://discord.com/api/webhooks/{webhook.id}/{webhook.token}"
  },
  { name: "a Discord invite", text: "Join us at https://discord.gg/abcDEF123 and say hi." },
  { name: "a base64 user id alone", text: "the id MTA0MjE1NjMxMjM0NTY3ODkw decodes to 104215631234567890" }
]

/**
 * The words a full-text index would make of a secret (runs of letters and digits, lowercased) that
 * are its own: mixed letters and digits, at least 8 long. Finding one of them in an index means part
 * of the secret is still there.
 */
export const secretFragments = (secret: string): ReadonlyArray<string> =>
  (secret.match(/[A-Za-z0-9]{8,}/g) ?? [])
    .filter((f) => /[0-9]/.test(f) && /[A-Za-z]/.test(f))
    .map((f) => f.toLowerCase())

/** Distinct shapes, in corpus order. */
export const corpusShapes = (corpus: ReadonlyArray<SecretSample> = SECRET_CORPUS): ReadonlyArray<string> => [
  ...new Set(corpus.map((s) => s.shape))
]
