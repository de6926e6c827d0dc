import type { Context } from "effect"
import type { InstallationId } from "../../domain/installation-id.js"
import type { ResolvedPaths } from "../../paths/paths.js"
import type { ProgramPaths } from "../../paths/program-paths.js"
import { daemonArgv } from "../../service/daemon-args.js"

/**
 * The command that runs this installation's MCP server: the absolute node and bundled entry, then
 * the installation id and its XDG roots (the daemon's own arguments). The MCP steps register it;
 * history_retrieval runs it.
 */
export const mcpServerCommand = (
  programs: Context.Tag.Service<ProgramPaths>,
  paths: ResolvedPaths,
  installationId: InstallationId
): { readonly command: string; readonly args: ReadonlyArray<string> } => ({
  command: programs.node,
  args: [
    programs.mcp,
    ...daemonArgv({
      "installation-id": installationId,
      "data-home": paths.dataHome,
      "config-home": paths.configHome,
      "cache-home": paths.cacheHome,
      "state-home": paths.stateHome
    })
  ]
})
