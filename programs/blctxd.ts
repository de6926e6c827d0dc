#!/usr/bin/env node
import { maintenanceJobKind } from "../src/jobs/maintenance-kind.js"
import { runDaemonProgram } from "./daemon-main.js"

// blctxd: the daemon with its production job kinds.
runDaemonProgram({ kinds: () => [maintenanceJobKind] })
