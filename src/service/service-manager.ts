import { Context, Data, type Effect, type Option } from "effect"
import type { ServiceSpec } from "./service-spec.js"

/** The service manager could not do what was asked; says what a person can do about it. */
export class ServiceError extends Data.TaggedError("ServiceError")<{
  readonly detail: string
  readonly remediation: string
}> {
  override get message() {
    return `${this.detail}. ${this.remediation}`
  }
}

/** What the manager knows about one installation's daemon. */
export interface ServiceStatus {
  /** Where the unit (or, for the detached supervisor, the launch record) lives. */
  readonly unitPath: string
  /** Its current content, if it exists. */
  readonly unitContent: Option.Option<string>
  /** The content this version writes for the spec. */
  readonly expectedUnit: string
  readonly enabled: boolean
  readonly active: boolean
  readonly mainPid: Option.Option<number>
  /** The running main process's command line (argv), when it can be read. */
  readonly commandLine: Option.Option<ReadonlyArray<string>>
}

export type SupervisorKind = "systemd-user" | "launchd" | "detached" | "fake-systemd"

/**
 * Keeps blctxd running for an installation: systemd user units on Linux, launchd user agents on
 * macOS, a detached self-supervised process where neither exists, and a fake systemd for tests.
 */
export class ServiceManager extends Context.Tag("blctx/ServiceManager")<
  ServiceManager,
  {
    readonly kind: SupervisorKind
    /** A sentence for reports: which supervisor is in use. */
    readonly description: string
    /** Writes the unit, enables it and (re)starts it; returns once the daemon reported ready. */
    readonly install: (spec: ServiceSpec) => Effect.Effect<void, ServiceError>
    /** Starts the daemon if it is not running (the detached supervisor's restart on demand). */
    readonly ensureRunning: (spec: ServiceSpec) => Effect.Effect<void, ServiceError>
    readonly status: (spec: ServiceSpec) => Effect.Effect<ServiceStatus, ServiceError>
    /** Stops and disables the daemon and removes its unit; nothing is left running. */
    readonly uninstall: (spec: ServiceSpec) => Effect.Effect<void, ServiceError>
  }
>() {}
