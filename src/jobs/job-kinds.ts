import { Context } from "effect"
import type { JobKindRegistry } from "./job-kind.js"

/** The job kinds this daemon runs. Indexing kinds (import, embed) register here as they arrive. */
export class JobKinds extends Context.Tag("blctx/JobKinds")<JobKinds, JobKindRegistry>() {}
