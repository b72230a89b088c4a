// The page the browser test loads (bundled by browser.test.ts with esbuild for the
// browser). It loads the kernels with initWasm, decodes the images the browser's own
// way (createImageBitmap, OffscreenCanvas), streams the large file from fetch, and
// runs the shared checks with the browser entry.
import * as lib from '../../src/browser.js';
import { runChecks, type CheckInput, type DecodedImage } from './checks.js';

export interface PageInput {
  flavor: lib.WasmFlavor;
  /** 'url': initWasm fetches the kernels itself; 'modules': the page passes their bytes. */
  load: 'url' | 'modules';
  images: string[];
  record: lib.SignedRecord;
  tampered: lib.SignedRecord;
  hmacKey: string;
  tlog: CheckInput['tlog'];
}

export interface PageOutput {
  /** The error a kernel call gives before initWasm. */
  beforeInit: string;
  flavor: string;
  /** RGBA pixels of each image as decoded here, base64. */
  pixels: string[];
  results: Awaited<ReturnType<typeof runChecks>>;
}

async function bytesOf(url: string): Promise<Uint8Array<ArrayBuffer>> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

async function* chunksOf(url: string): AsyncIterable<Uint8Array> {
  const res = await fetch(url);
  if (!res.ok || res.body === null) throw new Error(`${url}: ${res.status}`);
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    yield value;
  }
}

async function decode(name: string): Promise<DecodedImage> {
  const bytes = await bytesOf(`/fixtures/${name}`);
  const bitmap = await createImageBitmap(new Blob([bytes]), { colorSpaceConversion: 'none', premultiplyAlpha: 'none' });
  const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
  const ctx = canvas.getContext('2d')!;
  ctx.drawImage(bitmap, 0, 0);
  const data = ctx.getImageData(0, 0, bitmap.width, bitmap.height).data;
  return { name, bytes, width: bitmap.width, height: bitmap.height, pixels: new Uint8Array(data.buffer, data.byteOffset, data.length) };
}

function base64(bytes: Uint8Array): string {
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

async function run(input: PageInput): Promise<PageOutput> {
  let beforeInit = '';
  try {
    lib.sha256Hex('x');
  } catch (err) {
    beforeInit = (err as Error).message;
  }
  if (input.load === 'url') {
    await lib.initWasm({ url: '/wasm/', flavor: input.flavor });
  } else {
    const modules: Partial<Record<lib.KernelName, Uint8Array>> = {};
    for (const name of lib.KERNEL_NAMES) modules[name] = await bytesOf(`/wasm/${name}.${input.flavor}.wasm`);
    await lib.initWasm({ modules, flavor: input.flavor });
  }
  const images = await Promise.all(input.images.map(decode));
  const audio = new Float32Array((await bytesOf('/audio.f32')).slice().buffer);
  const checks: CheckInput = {
    file: chunksOf('/large.bin'),
    images,
    audio: { samples: audio, rate: 44100 },
    record: input.record,
    tampered: input.tampered,
    hmacKey: input.hmacKey,
    tlog: input.tlog,
  };
  const results = await runChecks(lib, checks);
  return { beforeInit, flavor: lib.wasmFlavor, pixels: images.map((i) => base64(i.pixels)), results };
}

(globalThis as { runPage?: typeof run }).runPage = run;
