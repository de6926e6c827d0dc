#!/usr/bin/env node
import { ServiceManagerLive } from "../layers/supervisor-selection.js"
import { runCli } from "./cli-main.js"

// The product's blctx: the machine's own service manager supervises blctxd (never a fake).
runCli({ entryUrl: import.meta.url, serviceManager: ServiceManagerLive })
