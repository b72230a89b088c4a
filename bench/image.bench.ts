// Images per second: ours (fingerprintFile in this thread, and the worker pool) against
// sharp-phash, imghash, the decode floor (sharp decoding the same file straight to 9x8
// grey, which uses libjpeg's shrink-on-load) and a plain full decode (sharp to raw RGB,
// what ours must do while shrink-on-load is off), on JPEG photos and PNGs from the dev corpus (or the fixtures), at
// concurrency 1 and 2, all in the same run. Each result is checked inside the loop.
//   npm run build:ts && node --import tsx bench/image.bench.ts
import Benchmark from 'benchmark';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import phashModule from 'sharp-phash';
import imghash from 'imghash';
import { fingerprintFile } from '../src/media/fingerprint.js';
import { createFingerprintPool } from '../src/pool/index.js';

const CORPUS = '/tmp/provenant-corpus/files/image';
const FIXTURES = new URL('../test/fixtures/media/', import.meta.url).pathname;
const PER_SET = 8;

/** Up to PER_SET files of 50 KB - 1.5 MB from the corpus folders, else the fixtures. */
function pick(dirs: string[], fixture: RegExp): Uint8Array[] {
  const files = dirs.map((d) => join(CORPUS, d)).filter(existsSync)
    .flatMap((d) => readdirSync(d).map((f) => join(d, f)))
    .filter((f) => { const s = statSync(f).size; return s > 50_000 && s < 1_500_000; })
    .sort();
  const chosen = files.length > 0
    ? Array.from({ length: Math.min(PER_SET, files.length) }, (_, i) => files[Math.floor((i * files.length) / Math.min(PER_SET, files.length))])
    : readdirSync(FIXTURES).filter((f) => fixture.test(f)).map((f) => join(FIXTURES, f));
  return chosen.map((f) => new Uint8Array(readFileSync(f)));
}

const sets: Record<string, Uint8Array[]> = {
  'JPEG photos': pick(['jpg', 'jpeg'], /\.jpe?g$/),
  PNG: pick(['png'], /\.png$/),
};
if (sets.PNG.length === 0) sets.PNG = [await sharp(Buffer.from(sets['JPEG photos'][0])).png().toBuffer()].map((b) => new Uint8Array(b));

// sharp-phash is CommonJS (module.exports = fn) but its types declare a default export.
const phash = phashModule as unknown as (input: Buffer) => Promise<string>;
const pool = createFingerprintPool({ workers: 2 });

type Contender = (bytes: Uint8Array) => Promise<unknown>;
const check = (ok: boolean, who: string) => { if (!ok) throw new Error(`${who} gave no result`); };
const contenders: Record<string, Contender> = {
  'ours (fingerprintFile)': async (b) => check((await fingerprintFile(b))?.hash_value.length === 8, 'ours'),
  'ours (shrink-on-load, opt-in)': async (b) => check((await fingerprintFile(b, { image: { shrinkOnLoad: true } }))?.hash_value.length === 8, 'ours'),
  'ours (pool, 2 workers)': async (b) => check((await pool.fingerprint(b.slice()))?.hash_value.length === 8, 'pool'),
  'decode floor (sharp to 9x8 grey)': async (b) =>
    check((await sharp(b, { autoOrient: true }).greyscale().resize(9, 8, { fit: 'fill' }).raw().toBuffer()).length === 72, 'floor'),
  'full decode (sharp raw, no resize)': async (b) =>
    check((await sharp(b, { autoOrient: true }).raw().toBuffer()).length > 0, 'full decode'),
  'sharp-phash': async (b) => check((await phash(Buffer.from(b))).length === 64, 'sharp-phash'),
  imghash: async (b) => check((await imghash.hash(Buffer.from(b), 8)).length === 16, 'imghash'),
};

/** One pass over the set with `lanes` files in flight. */
async function pass(files: Uint8Array[], fn: Contender, lanes: number): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: lanes }, async () => {
    while (next < files.length) await fn(files[next++]);
  }));
}

for (const [setName, files] of Object.entries(sets)) {
  // One untimed pass each first: wasm instantiation, worker start-up, sharp's caches.
  for (const fn of Object.values(contenders)) await pass(files, fn, 2);
  for (const lanes of [1, 2]) {
    const rates: Record<string, number> = {};
    await new Promise<void>((done) => {
      const suite = new Benchmark.Suite();
      // benchmark.js measures the first entry of a suite low (its own start-up); a throwaway first entry takes that.
      for (const [name, fn] of [['warm-up', contenders['full decode (sharp raw, no resize)']] as const, ...Object.entries(contenders)]) {
        suite.add(name, { defer: true, minSamples: 3, maxTime: 2, fn: (d: { resolve(): void }) => { pass(files, fn, lanes).then(() => d.resolve(), (e) => { console.error(e); process.exit(1); }); } });
      }
      suite.on('cycle', (e: { target: Benchmark }) => { rates[String(e.target.name)] = e.target.hz! * files.length; });
      suite.on('complete', () => done());
      suite.run({ async: true });
    });
    const ours = rates['ours (fingerprintFile)'];
    const floor = rates['decode floor (sharp to 9x8 grey)'];
    console.log(`\n${setName} (${files.length} files), concurrency ${lanes}:`);
    for (const [name, hz] of Object.entries(rates).filter(([n]) => n !== 'warm-up')) {
      console.log(`  ${name.padEnd(34)} ${hz.toFixed(1).padStart(8)} images/s   ours/this ${(ours / hz).toFixed(2)}   this/floor ${(hz / floor).toFixed(2)}`);
    }
  }
}
await pool.close();
