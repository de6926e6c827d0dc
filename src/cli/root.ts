import { Command } from "@effect/cli"
import { pingCommand } from "../daemon/ping-command.js"
import { exploreCommand } from "./explore-command.js"
import { contextCommand, indexCommand, indexStatusCommand, recentCommand, searchCommand } from "./history-commands.js"
import { doctorCommand, installCommand, statusCommand, uninstallCommand } from "./install-commands.js"

/** `blctx`: every subcommand hangs off this one root. */
export const rootCommand = Command.make("blctx").pipe(
  Command.withDescription(
    "Persistent, private context for coding agents. Global flags: --json (one JSON document on stdout), --no-color."
  ),
  Command.withSubcommands([
    installCommand,
    statusCommand,
    doctorCommand,
    uninstallCommand,
    exploreCommand,
    indexCommand,
    indexStatusCommand,
    searchCommand,
    recentCommand,
    contextCommand,
    pingCommand
  ])
)
