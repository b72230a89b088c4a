// The one bridge to WebAssembly (STYLE.md habit 1).
//
// Every kernel module is compiled twice (SIMD and scalar); the SIMD build is used
// when this engine validates SIMD, unless PROVENANT_WASM=scalar|simd forces one.
// This module owns instantiation, the memory views and the scratch input buffer;
// the per-algorithm wrappers in src/lib only call kernel exports through it.
import { readFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export type WasmFlavor = 'simd' | 'scalar';

// (module (func (result v128) (v128.const i64x2 0 0)))
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 22, 1, 20, 0, 253, 12, 0, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 11,
]);

export const simdSupported: boolean = WebAssembly.validate(SIMD_PROBE);

function chooseFlavor(): WasmFlavor {
  const forced = process.env.PROVENANT_WASM;
  if (forced === 'scalar') return 'scalar';
  if (forced === 'simd') {
    if (!simdSupported) throw new Error('PROVENANT_WASM=simd but this engine has no WebAssembly SIMD');
    return 'simd';
  }
  if (forced !== undefined && forced !== '') throw new Error(`PROVENANT_WASM must be simd or scalar, not "${forced}"`);
  return simdSupported ? 'simd' : 'scalar';
}

/** Which build this process runs. */
export const wasmFlavor: WasmFlavor = chooseFlavor();

function findPackageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'asconfig.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('provenant: cannot find the package root (asconfig.json)');
    dir = parent;
  }
}

export const packageRoot: string = findPackageRoot();

/** A file of the compiled package, dist/<relative>; a clear error when it was not compiled. */
export function compiledFile(relative: string): string {
  const file = join(packageRoot, 'dist', relative);
  if (!existsSync(file)) throw new Error(`provenant: ${file} is missing; run "npm run build:ts" to compile it`);
  return file;
}

/** Exports every kernel module has (assembly/common/memory.ts). */
export interface BaseExports {
  memory: WebAssembly.Memory;
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
    const file = join(packageRoot, 'build', `${key}.wasm`);
    if (!existsSync(file)) throw new Error(`provenant: ${file} is missing; run "npm run build:wasm"`);
    const module = new WebAssembly.Module(readFileSync(file));
    const instance = new WebAssembly.Instance(module, {
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
