// The browser side of the bridge to WebAssembly (the shared part is src/lib/wasm-core.ts).
// A page cannot read build/*.wasm synchronously on first use the way Node does, so it
// compiles the kernel modules once, up front: initWasm() fetches them from a base URL
// (where build/*.wasm is served) or takes the bytes or modules the caller passes, then
// every library call is synchronous as in Node. No Node built-in is reached.
//
// With no argument the files are found beside this module, each written as
// `new URL('./<name>.<flavor>.wasm', import.meta.url)`: bundlers that understand that
// pattern (webpack 5, Vite, Parcel, Rollup with its URL plugin) emit each file and
// rewrite its URL; esbuild leaves the expression as it is, so the URL is then beside the
// bundle, where the page serves the files. The package ships them beside the compiled
// module (dist/src/lib/, copied from build/ by scripts/copy-browser-wasm.mjs) as well
// as in build/.
import { KERNEL_NAMES, setModuleLoader, simdSupported, type KernelName, type WasmFlavor } from './wasm-core.js';

/**
 * Each kernel file beside this module, one literal `new URL(..., import.meta.url)` per
 * file so that bundlers see every one (a kernel added to KERNEL_NAMES needs its lines).
 */
const BESIDE_THIS_MODULE: Record<KernelName, Record<WasmFlavor, () => URL>> = {
  core: { simd: () => new URL('./core.simd.wasm', import.meta.url), scalar: () => new URL('./core.scalar.wasm', import.meta.url) },
  chromaprint: { simd: () => new URL('./chromaprint.simd.wasm', import.meta.url), scalar: () => new URL('./chromaprint.scalar.wasm', import.meta.url) },
  integrity: { simd: () => new URL('./integrity.simd.wasm', import.meta.url), scalar: () => new URL('./integrity.scalar.wasm', import.meta.url) },
  matchindex: { simd: () => new URL('./matchindex.simd.wasm', import.meta.url), scalar: () => new URL('./matchindex.scalar.wasm', import.meta.url) },
  features: { simd: () => new URL('./features.simd.wasm', import.meta.url), scalar: () => new URL('./features.scalar.wasm', import.meta.url) },
  iscc: { simd: () => new URL('./iscc.simd.wasm', import.meta.url), scalar: () => new URL('./iscc.scalar.wasm', import.meta.url) },
};

const HOW_TO_PASS = 'serve the package\'s build/*.wasm files there, or pass initWasm({ url: \'<the URL of the directory that serves them>\' }) or initWasm({ modules })';

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

/** Fetches and compiles one kernel file; a failure names the URL tried, why, and what to pass instead. */
async function fetchModule(url: URL, where: string): Promise<WebAssembly.Module> {
  let response: Response;
  try {
    response = await fetch(url);
  } catch (err) {
    throw new Error(`provenant: fetching ${url} failed (${(err as Error).message}); ${where}: ${HOW_TO_PASS}`);
  }
  if (!response.ok) throw new Error(`provenant: fetching ${url} failed: ${response.status} ${response.statusText}; ${where}: ${HOW_TO_PASS}`);
  // compileStreaming would insist on the application/wasm type; not every static server sends it
  const bytes = await response.arrayBuffer();
  try {
    return await WebAssembly.compile(bytes);
  } catch (err) {
    // a server that answers every path with its index page
    throw new Error(`provenant: ${url} is not a WebAssembly module (${(err as Error).message}); ${where}: ${HOW_TO_PASS}`);
  }
}

async function compile(name: KernelName, flavor: WasmFlavor, source: WasmSource): Promise<void> {
  const given = source.modules?.[name];
  let module: WebAssembly.Module;
  if (given instanceof WebAssembly.Module) {
    module = given;
  } else if (given !== undefined) {
    module = await WebAssembly.compile(given);
  } else if (source.url !== undefined) {
    module = await fetchModule(new URL(`${name}.${flavor}.wasm`, base(source.url)), 'initWasm({ url }) was given');
  } else if (source.modules === undefined) {
    let url: URL;
    try {
      url = BESIDE_THIS_MODULE[name][flavor]();
    } catch (err) {
      // a bundle without import.meta (an IIFE or CommonJS build)
      throw new Error(`provenant: initWasm() cannot tell where ${name}.${flavor}.wasm is (${(err as Error).message}): pass initWasm({ url: '<the URL of the directory that serves build/*.wasm>' }) or initWasm({ modules })`);
    }
    module = await fetchModule(url, 'initWasm() looked beside the library\'s module, where bundlers put it');
  } else {
    return; // not given: a call that needs this kernel throws, naming it
  }
  compiled.set(`${name}.${flavor}`, module);
}

/**
 * Compiles the kernel modules and makes them the library's: await it once before any
 * other call. With no `url` and no `modules` every kernel is fetched from beside this
 * module (where bundlers put it; see above); with `url` every kernel not in `modules`
 * is fetched from there; with `modules` alone only the kernels given are available
 * (SHA-256, HMAC, dHash, bands and Hamming need `core`; MatchIndex `matchindex`;
 * Chromaprint `chromaprint`; the byte-level integrity checks `integrity`). A file that
 * cannot be fetched or compiled rejects, naming its URL and the options to pass.
 */
export async function initWasm(source: WasmSource = {}): Promise<void> {
  const flavor = source.flavor ?? (simdSupported ? 'simd' : 'scalar');
  if (flavor === 'simd' && !simdSupported) throw new Error('provenant: the SIMD build was asked for but this engine has no WebAssembly SIMD');
  await Promise.all(KERNEL_NAMES.map((name) => compile(name, flavor, source)));
  setModuleLoader((name, f) => {
    const module = compiled.get(`${name}.${f}`);
    if (module === undefined) throw new Error(`provenant: the WebAssembly module ${name}.${f} was not given to initWasm`);
    return module;
  }, flavor);
}
