// The one bridge to WebAssembly (STYLE.md habit 1), the part every environment shares.
//
// Every kernel module is compiled twice (SIMD and scalar). This module owns the
// choice of build, instantiation, the memory views and the scratch input buffer; the
// per-algorithm wrappers in src/lib only call kernel exports through it. Where the
// compiled modules come from is given by a loader: in Node src/lib/wasm.ts reads
// build/*.wasm synchronously on first use; in a browser initWasm()
// (src/lib/wasm-browser.ts) fetches or takes them before the first kernel call. So
// this module reaches no Node built-in and can be bundled for a browser.

export type WasmFlavor = 'simd' | 'scalar';

/** The kernel modules (build/<name>.<flavor>.wasm). */
export const KERNEL_NAMES = ['core', 'chromaprint', 'integrity', 'matchindex', 'features', 'iscc'] as const;
export type KernelName = (typeof KERNEL_NAMES)[number];

// (module (func (result v128) (v128.const i64x2 0 0)))
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 22, 1, 20, 0, 253, 12, 0, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 11,
]);

export const simdSupported: boolean = WebAssembly.validate(SIMD_PROBE);

/** Which build the library runs: the loader sets it once (PROVENANT_WASM in Node, initWasm's option in a browser). */
export let wasmFlavor: WasmFlavor = simdSupported ? 'simd' : 'scalar';

/**
 * A compiled WebAssembly.Module. The published declarations name no WebAssembly type:
 * TypeScript declares them in the DOM library only, which a Node project's settings
 * need not include, and only loadKernel instantiates a module.
 */
export type CompiledModule = object;

/** A compiled kernel module by name and build; throws when it cannot be had. */
export type ModuleLoader = (name: string, flavor: WasmFlavor) => CompiledModule;

let loader: ModuleLoader = (name, flavor) => {
  throw new Error(`provenant: no loader for the WebAssembly module ${name}.${flavor}: in a browser await initWasm() first; in Node import src/lib/wasm.js (the package entry does)`);
};

/** Sets where compiled modules come from and which build is the default. */
export function setModuleLoader(load: ModuleLoader, flavor: WasmFlavor): void {
  if (flavor === 'simd' && !simdSupported) throw new Error('provenant: the SIMD build was asked for but this engine has no WebAssembly SIMD');
  loader = load;
  wasmFlavor = flavor;
}

/** Exports every kernel module has (assembly/common/memory.ts). */
export interface BaseExports {
  /** The module's WebAssembly.Memory, by the one property used (see CompiledModule). */
  memory: { readonly buffer: ArrayBuffer };
  scratch(len: number): number;
  alloc(len: number): number;
  release(ptr: number): void;
}

/** One instantiated kernel module and its memory views. */
export class Kernel<E extends BaseExports = BaseExports> {
  readonly exports: E;
  private buffer: ArrayBuffer;
  private u8view: Uint8Array;

  constructor(exports: E) {
    this.exports = exports;
    this.buffer = exports.memory.buffer;
    this.u8view = new Uint8Array(this.buffer);
  }

  /** A byte view of the whole memory, re-created after the memory grew. */
  get u8(): Uint8Array {
    if (this.exports.memory.buffer !== this.buffer) {
      this.buffer = this.exports.memory.buffer;
      this.u8view = new Uint8Array(this.buffer);
    }
    return this.u8view;
  }

  /** Any typed view over the memory; call again after any kernel call that may grow memory. */
  view<T extends ArrayBufferView>(ctor: new (b: ArrayBuffer, off: number, len: number) => T, ptr: number, length: number): T {
    void this.u8;
    return new ctor(this.buffer, ptr, length);
  }

  /** Copies `bytes` into the module's scratch buffer and returns its pointer. */
  writeScratch(bytes: Uint8Array, extra = 0): number {
    const ptr = this.exports.scratch(bytes.length + extra);
    this.u8.set(bytes, ptr);
    return ptr;
  }

  /** Copies `length` bytes at `ptr` out of wasm memory. */
  read(ptr: number, length: number): Uint8Array {
    return this.u8.slice(ptr, ptr + length);
  }
}

const cache = new Map<string, Kernel>();

/** The kernel module `name` (build/<name>.<flavor>.wasm), instantiated once per thread. */
export function loadKernel<E extends BaseExports>(name: string, flavor: WasmFlavor = wasmFlavor): Kernel<E> {
  const key = `${name}.${flavor}`;
  let kernel = cache.get(key);
  if (kernel === undefined) {
    const instance = new WebAssembly.Instance(loader(name, flavor) as WebAssembly.Module, {
      env: {
        abort(_msg: number, _file: number, line: number, col: number): never {
          throw new Error(`provenant: ${key}.wasm aborted at ${line}:${col}`);
        },
      },
    });
    kernel = new Kernel(instance.exports as unknown as BaseExports);
    cache.set(key, kernel);
  }
  return kernel as Kernel<E>;
}
