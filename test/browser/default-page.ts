// The page of default-location.test.ts, as a new user writes it: initWasm() with no
// argument, then sha256Hex. Bundled with esbuild, which leaves the library's
// `new URL('./<name>.<flavor>.wasm', import.meta.url)` to resolve beside the bundle.
import { initWasm, sha256Hex, wasmFlavor } from '../../src/browser.js';

export type DefaultPageOutput = { ok: true; flavor: string; sha256: string } | { ok: false; message: string };

async function runDefault(): Promise<DefaultPageOutput> {
  try {
    await initWasm();
    return { ok: true, flavor: wasmFlavor, sha256: sha256Hex(new TextEncoder().encode('abc')) };
  } catch (err) {
    return { ok: false, message: (err as Error).message };
  }
}

(globalThis as unknown as { runDefault: typeof runDefault }).runDefault = runDefault;
