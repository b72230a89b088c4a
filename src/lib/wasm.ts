// The Node side of the bridge to WebAssembly (the shared part is src/lib/wasm-core.ts):
// kernel modules are read from build/<name>.<flavor>.wasm synchronously on first use.
// The SIMD build is used when this engine validates SIMD, unless PROVENANT_WASM=scalar|simd
// forces one. Importing this module installs the loader, so every Node entry (the
// package entry, src/lib/index.ts, the workers) imports it, directly or through them.
import { readFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setModuleLoader, simdSupported, type WasmFlavor } from './wasm-core.js';

export { Kernel, loadKernel, simdSupported, wasmFlavor, KERNEL_NAMES } from './wasm-core.js';
export type { BaseExports, WasmFlavor } from './wasm-core.js';

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

/** The nearest directory above this module whose package.json names this package: the
 *  repository, or node_modules/provenant where it is installed (which has no asconfig.json). */
function findPackageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'provenant') return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('provenant: cannot find the package root (a package.json named "provenant")');
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

setModuleLoader((name, flavor) => {
  const file = join(packageRoot, 'build', `${name}.${flavor}.wasm`);
  if (!existsSync(file)) throw new Error(`provenant: ${file} is missing; run "npm run build:wasm"`);
  return new WebAssembly.Module(readFileSync(file));
}, chooseFlavor());
