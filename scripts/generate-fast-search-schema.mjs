// Writes src/cli/fast-search-schema.ts, the search fast path's copy of what the search schemas
// say, from the compiled schemas (run after `tsc -p tsconfig.json`). The build fails while the
// file differs from the schemas (scripts/bundle.mjs), and so does src/cli/fast-search-derive.test.ts.
import { execFileSync } from "node:child_process"
import { writeFileSync } from "node:fs"
import { fastSearchSchemaModule } from "../dist/src/cli/fast-search-derive.js"

const file = "src/cli/fast-search-schema.ts"
writeFileSync(file, fastSearchSchemaModule())
execFileSync("npx", ["biome", "format", "--write", file], { stdio: "inherit" })
