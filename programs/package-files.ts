import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { type SynonymTable, synonymTable } from "../src/retrieval/synonyms.js"

/**
 * Files the build puts beside the programs in the package's dist/, found from here: every
 * program is bundled into dist/programs or dist/bin, or compiled into dist/programs, all one
 * folder below dist/.
 */

/** The viewer's page (dist/ui, bundled by scripts/bundle.mjs). */
export const PACKAGE_UI_FOLDER = fileURLToPath(new URL("../ui", import.meta.url))

/** The thesaurus words-only search widens questions with (derived from WordNet by scripts/derive-synonyms.mjs). */
export const PACKAGE_SYNONYMS_FILE = fileURLToPath(new URL("../data/synonyms.txt", import.meta.url))

/** The package's thesaurus, read and indexed (about 1.3 MB of text; throws when the file cannot be read). */
export const loadPackageSynonyms = (): SynonymTable => synonymTable(readFileSync(PACKAGE_SYNONYMS_FILE, "utf8"))
