/**
 * The part of the WebAssembly JS API the scan uses, typed here: the project's TypeScript libs (no DOM) do not
 * declare it, though Node provides it.
 */
export interface SharedMemory {
  readonly buffer: SharedArrayBuffer;
  grow(deltaPages: number): number;
}

interface WasmApi {
  Memory: new (descriptor: { initial: number; maximum: number; shared: true }) => SharedMemory;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}

export const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
