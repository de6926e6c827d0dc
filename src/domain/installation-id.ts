import { Schema } from "effect"

/** The UUID v4 that names one installation: in the manifest, the database and the service unit. */
export const InstallationId = Schema.UUID.pipe(Schema.brand("InstallationId"))
export type InstallationId = typeof InstallationId.Type
