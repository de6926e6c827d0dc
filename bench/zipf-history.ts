import { rng, type SyntheticTurn, writeRolloutFile } from "./synthetic-history.js"

/**
 * A synthetic history that looks like language to a search engine: a vocabulary of tens of
 * thousands of generated words drawn with Zipf–Mandelbrot frequencies (a few words everywhere, a
 * long tail of rare ones), sessions with topic words of their own, and messages whose lengths
 * follow log-normal laws (a few words to several thousand characters). Written as Codex rollout
 * files with the record layout of `synthetic-history.ts`. Everything is deterministic from the
 * seed: the same seed writes the same bytes and generates the same queries.
 */

/** The most common words are real ones (single tokens for the tokenizer, like in real text). */
const COMMON = (
  "the to and of a in is it that for you this on with we be not as can are at if or was from have " +
  "but by an do so all it's should then when will there what which use just one file run test error " +
  "fix add now need new code check build make change set line value function return type data call " +
  "config path update command output first also more because like get other into see only after " +
  "before still case time version name list work way does default path back same each"
).split(" ")

const ONSETS = "b c d f g h j k l m n p r s t v w z br cr dr fl gr kl pl pr sk sl sp st str tr ch sh th".split(" ")
const VOWELS = "a e i o u a e i o u ai ea ou y".split(" ")
const CODAS = ",,,n,r,s,t,l,m,x,nd,st,rk,ng".split(",")

export interface ZipfHistoryOptions {
  readonly seed?: number
  /** Distinct words (default 50,000). */
  readonly vocabulary?: number
  /** The Zipf exponent (default 1.05) and Mandelbrot's offset (default 2.7). */
  readonly exponent?: number
  readonly offset?: number
  /** When the first record is written (epoch ms; default 2026-01-01), each later one a second after. */
  readonly start?: number
}

/** A log-normal draw of median `median`, clamped to [min, max]. */
const logNormal = (next: () => number, median: number, sigma: number, min: number, max: number) => {
  const u = Math.max(next(), 1e-12)
  const v = next()
  const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v)
  return Math.round(Math.min(max, Math.max(min, median * Math.exp(sigma * z))))
}

/** Words in order of frequency rank: real common words, then generated ones (rarer → longer). */
export const zipfVocabulary = (seed: number, size: number): ReadonlyArray<string> => {
  const next = rng(seed ^ 0x9e3779b9)
  const words: Array<string> = []
  const seen = new Set<string>()
  for (const w of COMMON) {
    if (words.length >= size) break
    if (!seen.has(w)) {
      seen.add(w)
      words.push(w)
    }
  }
  const pick = (xs: ReadonlyArray<string>) => xs[Math.floor(next() * xs.length)] ?? ""
  while (words.length < size) {
    // One or two syllables, a third for a third of the rarer words: 4–10 letters mostly.
    const syllables = 1 + Math.floor(next() * 2) + (words.length > 2000 && next() < 0.35 ? 1 : 0)
    let w = ""
    for (let s = 0; s < syllables; s++) w += pick(ONSETS) + pick(VOWELS)
    w += pick(CODAS)
    if (w.length < 3 || seen.has(w)) continue
    seen.add(w)
    words.push(w)
  }
  return words
}

/** Inverse-CDF sampling of ranks with weights 1 / (rank + offset)^exponent. */
const zipfSampler = (size: number, exponent: number, offset: number) => {
  const cumulative = new Float64Array(size)
  let total = 0
  for (let r = 0; r < size; r++) {
    total += 1 / (r + 1 + offset) ** exponent
    cumulative[r] = total
  }
  return (u: number) => {
    const target = u * total
    let lo = 0
    let hi = size - 1
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if ((cumulative[mid] ?? 0) < target) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}

/**
 * A Zipf history generator. `write` adds rollout files (sessions `firstSession`…); `queries`
 * generates questions about sessions `1..sessions` the way people ask: 2–8 terms, a mix of a
 * session's rarer topic words and common words.
 */
export const makeZipfHistory = (options: ZipfHistoryOptions = {}) => {
  const seed = options.seed ?? 1
  const size = options.vocabulary ?? 50_000
  const words = zipfVocabulary(seed, size)
  const rank = zipfSampler(size, options.exponent ?? 1.05, options.offset ?? 2.7)
  const word = (u: number) => words[rank(u)] ?? "the"

  /** A session's topic: 12 words of the middle and tail of the vocabulary (log-uniform rank). */
  const topicOf = (session: number): ReadonlyArray<string> => {
    const next = rng(seed * 7919 + session * 104_729)
    return Array.from({ length: 12 }, () => {
      const r = Math.floor(Math.exp(Math.log(300) + next() * (Math.log(size - 1) - Math.log(300))))
      return words[r] ?? "the"
    })
  }

  /** `n` words: Zipf background, topic words, now and then an identifier, a path or a number. */
  const text = (next: () => number, topic: ReadonlyArray<string>, n: number) => {
    const out: Array<string> = []
    let sentence = 0
    let sentenceLength = 5 + Math.floor(next() * 20)
    for (let i = 0; i < n; i++) {
      const u = next()
      let w: string
      if (u < 0.1) w = topic[Math.floor(next() * topic.length)] ?? "the"
      else if (u < 0.115) w = `${word(next())}${capitalize(word(next()))}`
      else if (u < 0.122) w = `src/${word(next())}/${word(next())}.ts`
      else if (u < 0.13) w = String(Math.floor(next() * 10_000))
      else w = word(next())
      if (sentence === 0) w = capitalize(w)
      sentence++
      if (sentence >= sentenceLength || i === n - 1) {
        w += "."
        sentence = 0
        sentenceLength = 5 + Math.floor(next() * 20)
        // Paragraphs in long texts.
        if (i < n - 1 && next() < 0.15) w += "\n\n"
      }
      out.push(w)
    }
    return out.join(" ").replace(/\n\n /g, "\n\n")
  }

  const start = options.start ?? Date.UTC(2026, 0, 1)
  let clock = { value: start }

  /**
   * Writes `files` rollout files of `turnsPerFile` turns, sessions `firstSession`…, file
   * positions (day folder, project) continuing from `firstSession - 1`. Returns their paths.
   */
  const write = (dir: string, files: number, turnsPerFile: number, firstSession = 1): Array<string> => {
    const paths: Array<string> = []
    for (let f = 0; f < files; f++) {
      const session = firstSession + f
      const topic = topicOf(session)
      const next = rng(seed * 31 + session)
      const turn = (): SyntheticTurn => ({
        // A few words to a pasted page; commentary short; answers from a line to several thousand characters.
        request: text(next, topic, logNormal(next, 14, 0.9, 2, 1200)),
        reasoning: text(next, topic, logNormal(next, 20, 0.4, 5, 80)),
        commentary: text(next, topic, logNormal(next, 18, 0.5, 3, 200)),
        toolOutput: text(next, topic, logNormal(next, 30, 0.8, 1, 400)),
        answer: text(next, topic, logNormal(next, 70, 1.1, 4, 1500))
      })
      paths.push(writeRolloutFile(dir, session, session - 1, turnsPerFile, turn, clock))
    }
    return paths
  }

  /** `n` queries about sessions 1..`sessions`, from `querySeed`. */
  const queries = (n: number, sessions: number, querySeed = seed + 1): Array<string> => {
    const next = rng(querySeed * 65_537 + 17)
    return Array.from({ length: n }, () => {
      const topic = topicOf(1 + Math.floor(next() * sessions))
      // 2–8 terms, most often 3–4.
      const terms = Math.min(8, Math.max(2, logNormal(next, 3.5, 0.45, 2, 8)))
      return Array.from({ length: terms }, () =>
        next() < 0.45 ? (topic[Math.floor(next() * topic.length)] ?? "the") : word(next())
      ).join(" ")
    })
  }

  return {
    words,
    topicOf,
    write,
    queries,
    /** Restarts the timestamps (so a new run writes the same bytes). */
    reset: () => {
      clock = { value: start }
    }
  }
}

const capitalize = (w: string) => (w.length === 0 ? w : `${w[0]?.toUpperCase() ?? ""}${w.slice(1)}`)
