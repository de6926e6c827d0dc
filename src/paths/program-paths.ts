import { Context } from "effect"

/** The absolute interpreter and entry points of this installation of blctx. */
export class ProgramPaths extends Context.Tag("blctx/ProgramPaths")<
  ProgramPaths,
  {
    readonly node: string
    readonly cli: string
    readonly daemon: string
    /** The stdio MCP server's entry (`dist/bin/blctx-mcp.mjs`), which codex_mcp registers. */
    readonly mcp: string
    /** The hook handler's entry (`dist/bin/blctx-hook.cjs`), which codex_hooks, claude_hooks and gemini_hooks register. */
    readonly hook: string
    /** The bundled skill (`skills/base-layer-context/SKILL.md` in the package), which codex_skills installs. */
    readonly skill: string
  }
>() {}
