import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Option, TestClock } from "effect"
import { LINK_LIFETIME, MAX_LINKS, MAX_SESSIONS, sameSecret, UiSessions } from "./ui-sessions.js"

const withSessions = <A, E>(use: (sessions: UiSessions) => Effect.Effect<A, E>) =>
  Effect.flatMap(UiSessions, use).pipe(Effect.provide(UiSessions.Default))

describe("the viewer's links and sessions", () => {
  it.effect(
    "a link is 32 random bytes base64url, opens one session once, and each session has its own CSRF token",
    () =>
      withSessions((sessions) =>
        Effect.gen(function* () {
          const link = yield* sessions.mintLink()
          expect(link.token).toMatch(/^[A-Za-z0-9_-]{43}$/)
          expect(Buffer.from(link.token, "base64url")).toHaveLength(32)
          const opened = yield* sessions.redeem(link.token)
          expect(Option.isSome(opened)).toBe(true)
          // Used up: the same token opens nothing the second time.
          expect(Option.isNone(yield* sessions.redeem(link.token))).toBe(true)
          const session = Option.getOrThrow(opened)
          expect(session.id).not.toBe(session.csrf)
          expect(Option.getOrThrow(yield* sessions.find(session.id))).toEqual(session)
          const other = Option.getOrThrow(yield* sessions.redeem((yield* sessions.mintLink()).token))
          expect(other.csrf).not.toBe(session.csrf)
          expect(other.id).not.toBe(session.id)
        })
      )
  )

  it.effect("a link expires ten minutes after it was minted, by the daemon's clock", () =>
    withSessions((sessions) =>
      Effect.gen(function* () {
        const fresh = yield* sessions.mintLink()
        const late = yield* sessions.mintLink()
        expect(late.expiresAt - (yield* TestClock.currentTimeMillis)).toBe(Duration.toMillis(LINK_LIFETIME))
        yield* TestClock.adjust(Duration.subtract(LINK_LIFETIME, Duration.millis(1)))
        expect(Option.isSome(yield* sessions.redeem(fresh.token))).toBe(true)
        yield* TestClock.adjust(Duration.millis(1))
        expect(Option.isNone(yield* sessions.redeem(late.token))).toBe(true)
      })
    )
  )

  it.effect("a bogus token or session id opens nothing", () =>
    withSessions((sessions) =>
      Effect.gen(function* () {
        const link = yield* sessions.mintLink()
        for (const bogus of ["", "x", `${link.token}x`, link.token.slice(1), link.token.toUpperCase()]) {
          expect(Option.isNone(yield* sessions.redeem(bogus))).toBe(true)
        }
        expect(Option.isSome(yield* sessions.redeem(link.token))).toBe(true)
        expect(Option.isNone(yield* sessions.find(link.token))).toBe(true)
        expect(Option.isNone(yield* sessions.find(""))).toBe(true)
      })
    )
  )

  it.effect("keeps at most the newest links and sessions, so memory stays bounded", () =>
    withSessions((sessions) =>
      Effect.gen(function* () {
        const links = yield* Effect.forEach(Array.from({ length: MAX_LINKS + 1 }), () => sessions.mintLink())
        expect(Option.isNone(yield* sessions.redeem(links[0]?.token ?? ""))).toBe(true)
        const opened = yield* Effect.forEach(links.slice(1), (l) => sessions.redeem(l.token))
        const first = Option.getOrThrow(opened[0] ?? Option.none())
        expect(Option.isSome(yield* sessions.find(first.id))).toBe(true)
        const more = yield* Effect.forEach(Array.from({ length: MAX_SESSIONS }), () =>
          Effect.flatMap(sessions.mintLink(), (l) => sessions.redeem(l.token))
        )
        expect(more.every(Option.isSome)).toBe(true)
        expect(Option.isNone(yield* sessions.find(first.id))).toBe(true)
      })
    )
  )

  it("compares secrets in constant time over their digests, whatever their lengths", () => {
    expect(sameSecret("abc", "abc")).toBe(true)
    expect(sameSecret("abc", "abd")).toBe(false)
    expect(sameSecret("abc", "abcd")).toBe(false)
    expect(sameSecret("", "")).toBe(true)
  })
})
