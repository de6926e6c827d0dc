import { Command, HelpDoc } from "@effect/cli"
import { agentLabels } from "../transcripts/formats/registry.js"
import { exploreCommand } from "./explore-command.js"
import { exportCommand, importNotesCommand } from "./export-commands.js"
import { forgetCommand } from "./forget-command.js"
import {
  contextCommand,
  indexCommand,
  indexStatusCommand,
  recentCommand,
  searchCommand,
  sessionsCommand
} from "./history-commands.js"
import { doctorCommand, installCommand, statusCommand, uninstallCommand } from "./install-commands.js"
import { notesCommand } from "./notes-commands.js"
import { pingCommand } from "./ping-command.js"
import { uiCommand } from "./ui-command.js"

/** Every subcommand, in the order `blctx --help` lists them. */
export const subcommands = [
  installCommand,
  statusCommand,
  doctorCommand,
  uninstallCommand,
  exploreCommand,
  indexCommand,
  indexStatusCommand,
  searchCommand,
  recentCommand,
  sessionsCommand,
  contextCommand,
  notesCommand,
  forgetCommand,
  exportCommand,
  importNotesCommand,
  uiCommand,
  pingCommand
] as const

/** `blctx`: every subcommand hangs off this one root. */
export const rootCommand = Command.make("blctx").pipe(
  Command.withDescription(
    HelpDoc.p(
      `Persistent, private context for coding agents: blctx indexes your own ${agentLabels()} transcripts on your own machine and hands that history back to the agent, with exact source citations. Nothing leaves the machine.`
    )
  ),
  Command.withSubcommands(subcommands)
)
