import { Context } from "effect"
import type { DaemonArgs } from "../service/daemon-args.js"

/** The command line blctxd was started with: the installation it serves and its XDG roots. */
export class DaemonConfig extends Context.Tag("blctx/DaemonConfig")<DaemonConfig, DaemonArgs>() {}
