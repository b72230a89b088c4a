// The browser side of the bridge to WebAssembly (the shared part is src/lib/wasm-core.ts).
// A page cannot read build/*.wasm synchronously on first use the way Node does, so it
// compiles the kernel modules once, up front: initWasm() fetches them from a base URL
// (where build/*.wasm is served) or takes the bytes or modules the caller passes, then
// every library call is synchronous as in Node. No Node built-in is reached.
import { KERNEL_NAMES, setModuleLoader, simdSupported, type KernelName, type WasmFlavor } from './wasm-core.js';

export interface WasmSource {
  /** Base URL of the directory holding `<name>.<flavor>.wasm` (the package's build/), e.g. '/assets/provenant/'. */
  url?: string | URL;
  /** Kernel modules by name, compiled or as bytes of `<name>.<flavor>.wasm`; taken before `url`. */
  modules?: Partial<Record<KernelName, BufferSource | WebAssembly.Module>>;
  /** The build to run; by default SIMD where the engine has it. */
  flavor?: WasmFlavor;
}

/** The directory URL, relative to the page, with the trailing slash URL resolution needs. */
function base(url: string | URL): URL {
  const dir = new URL(url, globalThis.location?.href);
  if (!dir.pathname.endsWith('/')) dir.pathname += '/';
  return dir;
}

const compiled = new Map<string, WebAssembly.Module>();

async function compile(name: KernelName, flavor: WasmFlavor, source: WasmSource): Promise<void> {
  const given = source.modules?.[name];
  let module: WebAssembly.Module;
  if (given instanceof WebAssembly.Module) {
    module = given;
  } else if (given !== undefined) {
    module = await WebAssembly.compile(given);
  } else if (source.url !== undefined) {
    const url = new URL(`${name}.${flavor}.wasm`, base(source.url));
    const response = await fetch(url);
    if (!response.ok) throw new Error(`provenant: fetching ${url} failed: ${response.status} ${response.statusText}`);
    // compileStreaming would insist on the application/wasm type; not every static server sends it
    module = await WebAssembly.compile(await response.arrayBuffer());
  } else {
    return; // not given: a call that needs this kernel throws, naming it
  }
  compiled.set(`${name}.${flavor}`, module);
}

/**
 * Compiles the kernel modules and makes them the library's: await it once before any
 * other call. With `url` every kernel not in `modules` is fetched from there; with
 * `modules` alone only the kernels given are available (SHA-256, HMAC, dHash, bands
 * and Hamming need `core`; MatchIndex `matchindex`; Chromaprint `chromaprint`; the
 * byte-level integrity checks `integrity`).
 */
export async function initWasm(source: WasmSource): Promise<void> {
  const flavor = source.flavor ?? (simdSupported ? 'simd' : 'scalar');
  if (flavor === 'simd' && !simdSupported) throw new Error('provenant: the SIMD build was asked for but this engine has no WebAssembly SIMD');
  if (source.url === undefined && source.modules === undefined) {
    throw new TypeError('provenant: initWasm needs the url of the directory holding the .wasm files, or the modules');
  }
  await Promise.all(KERNEL_NAMES.map((name) => compile(name, flavor, source)));
  setModuleLoader((name, f) => {
    const module = compiled.get(`${name}.${f}`);
    if (module === undefined) throw new Error(`provenant: the WebAssembly module ${name}.${f} was not given to initWasm`);
    return module;
  }, flavor);
}
