import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import { Clock, Duration, Effect, Option, Ref } from "effect"

/** How long a one-time link works after `blctx ui` printed it. */
export const LINK_LIFETIME = Duration.minutes(10)
/** Links not yet used, and sessions, kept at most: the oldest goes first, so memory stays bounded. */
export const MAX_LINKS = 64
export const MAX_SESSIONS = 64

/** 32 random bytes, base64url: a link's token, a session's id, a session's CSRF token. */
export const randomSecret = () => randomBytes(32).toString("base64url")

/**
 * Secrets are kept and looked up by their SHA-256: a map lookup's timing then says nothing about
 * the secret itself, and the final comparison is constant-time.
 */
const digest = (secret: string) => createHash("sha256").update(secret, "utf8").digest()
const key = (secret: string) => digest(secret).toString("hex")

/** Equal secrets, compared in constant time (over their digests, so lengths need not match). */
export const sameSecret = (a: string, b: string) => timingSafeEqual(digest(a), digest(b))

export interface UiSession {
  readonly id: string
  readonly csrf: string
}

interface State {
  /** Unused links: the token's digest, to when it expires (epoch ms). */
  readonly links: ReadonlyMap<string, { readonly token: string; readonly expiresAt: number }>
  /** Live sessions by the id's digest. */
  readonly sessions: ReadonlyMap<string, UiSession>
}

/** A map without its oldest entries beyond `max` (maps keep insertion order). */
const bounded = <K, V>(entries: ReadonlyArray<readonly [K, V]>, max: number) =>
  new Map(entries.slice(Math.max(0, entries.length - max)))

/**
 * The viewer's secrets, in the daemon's memory only: one-time links (single use, ten minutes by the
 * daemon's clock), the sessions they open, and each session's CSRF token. A restarted daemon
 * forgets them all; `blctx ui` prints a new link.
 */
export class UiSessions extends Effect.Service<UiSessions>()("blctx/UiSessions", {
  effect: Effect.gen(function* () {
    const state = yield* Ref.make<State>({ links: new Map(), sessions: new Map() })

    /** A new one-time link's token and when it expires; expired links are dropped meanwhile. */
    const mintLink = Effect.fn("UiSessions.mintLink")(function* () {
      const now = yield* Clock.currentTimeMillis
      const token = randomSecret()
      const expiresAt = now + Duration.toMillis(LINK_LIFETIME)
      yield* Ref.update(state, (s) => ({
        ...s,
        links: bounded(
          [...[...s.links].filter(([, link]) => link.expiresAt > now), [key(token), { token, expiresAt }] as const],
          MAX_LINKS
        )
      }))
      return { token, expiresAt }
    })

    /** Uses a link's token up (whatever the outcome) and opens a session when it was live. */
    const redeem = Effect.fn("UiSessions.redeem")(function* (token: string) {
      const now = yield* Clock.currentTimeMillis
      const session: UiSession = { id: randomSecret(), csrf: randomSecret() }
      return yield* Ref.modify(state, (s): [Option.Option<UiSession>, State] => {
        const link = s.links.get(key(token))
        if (link === undefined) return [Option.none(), s]
        const links = new Map(s.links)
        links.delete(key(token))
        if (link.expiresAt <= now || !sameSecret(link.token, token)) return [Option.none(), { ...s, links }]
        const sessions = bounded([...s.sessions, [key(session.id), session] as const], MAX_SESSIONS)
        return [Option.some(session), { links, sessions }]
      })
    })

    /** The live session a cookie names, if any. */
    const find = Effect.fn("UiSessions.find")(function* (sessionId: string) {
      const s = yield* Ref.get(state)
      return Option.fromNullable(s.sessions.get(key(sessionId))).pipe(
        Option.filter((session) => sameSecret(session.id, sessionId))
      )
    })

    return { mintLink, redeem, find } as const
  })
}) {}
