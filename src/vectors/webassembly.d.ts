// The part of the WebAssembly JavaScript API the compact matrix uses. Node has it globally, but
// the project compiles without the DOM library, where its types live.
declare namespace WebAssembly {
  class Module {
    constructor(bytes: Uint8Array)
  }
  class Instance {
    constructor(module: Module, imports: Record<string, unknown>)
    readonly exports: Record<string, unknown>
  }
  class Memory {
    readonly buffer: ArrayBuffer
    grow(pages: number): number
  }
}
