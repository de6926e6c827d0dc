import { lstatSync, writeFileSync } from "node:fs"
import * as NodePath from "node:path"
import type { ModelSpec } from "../src/domain/model-spec.js"
import { fingerprintOf } from "../src/embedding/fingerprint.js"
import {
  ModelVerification,
  VERIFICATION_VERSION,
  verificationPath,
  verificationText
} from "../src/embedding/model-verification.js"

/**
 * Test support: writes the record the embedding_model step writes after every check passed, for
 * a folder a test filled itself (the files must already be the pinned ones). With `failure`, the
 * record of a failed check. Nothing in the product imports this file.
 */
export const writeVerification = (folder: string, spec: ModelSpec, failure?: string) => {
  const fingerprint = fingerprintOf(spec)
  const record = new ModelVerification({
    version: VERIFICATION_VERSION,
    fingerprint: fingerprint.key,
    model: fingerprint.label,
    checked_at: new Date(0).toISOString(),
    files:
      failure === undefined
        ? spec.files.map((f) => ({
            name: f.name,
            size: f.size,
            sha256: f.sha256,
            mtime_ms: lstatSync(NodePath.join(folder, f.name)).mtimeMs
          }))
        : [],
    sanity: spec.sanity,
    result:
      failure === undefined
        ? { _tag: "passed", first: spec.sanity.expected_first, score: 1 }
        : { _tag: "failed", failure }
  })
  writeFileSync(verificationPath(folder), verificationText(record), { mode: 0o600 })
}
