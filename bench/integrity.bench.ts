// Integrity checks, timed against peers from the same run:
// 1. the whole report of a PNG photo (with LSB statistics) against sharp decoding the
//    same image to raw pixels (target: at most 2x);
// 2. the byte-level checks alone (structure walk, signature scan, entropy windows) in
//    MB/s against node:crypto SHA-256 of the same bytes;
// 3. the whole report of a JPEG (no pixel decode) against SHA-256.
// Each timed call checks its result. The machine is shared, so the fastest sample
// is printed beside the mean. Inputs: a large corpus PNG and JPEG when
// /tmp/provenant-corpus exists, else the test fixtures.
// Run: node --import tsx bench/integrity.bench.ts
import Benchmark from 'benchmark';
import { existsSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { integrityReport } from '../src/media/integrity.js';
import { KernelBytes, walkPng, walkJpeg, scanSignatures, entropyProfile } from '../src/lib/integrity.js';
import { wasmFlavor } from '../src/lib/wasm.js';

const corpus = '/tmp/provenant-corpus/files/image';
const fixtures = new URL('../test/fixtures/integrity/', import.meta.url).pathname;
const pngFile = existsSync(`${corpus}/png/python3-skimage__astronaut.png`) ? `${corpus}/png/python3-skimage__astronaut.png` : `${fixtures}butterfly.png`;
const bigFile = existsSync(`${corpus}/png/mate-backgrounds__Ubuntu-Mate-Warm-no-logo.png`) ? `${corpus}/png/mate-backgrounds__Ubuntu-Mate-Warm-no-logo.png` : pngFile;
const jpgFile = existsSync(`${corpus}/jpg/opencv-doc__baboon.jpg`) ? `${corpus}/jpg/opencv-doc__baboon.jpg` : `${fixtures}happyfish.jpg`;
if (!existsSync(`${corpus}/png`)) console.log('(no corpus at /tmp/provenant-corpus: using the test fixtures)');

Benchmark.options.maxTime = 3;
Benchmark.options.minSamples = 5;

interface Row { name: string; mean: number; min: number }

async function runSuite(add: (s: Benchmark.Suite) => void): Promise<Row[]> {
  const rows: Row[] = [];
  const suite = new Benchmark.Suite();
  add(suite);
  suite.on('cycle', (e: Benchmark.Event) => {
    const b = e.target as unknown as Benchmark;
    rows.push({ name: String(b.name), mean: b.stats?.mean ?? NaN, min: Math.min(...(b.stats?.sample ?? [NaN])) });
  });
  await new Promise<void>((done) => suite.on('complete', () => done()).run({ async: true }));
  return rows;
}

const asyncCase = (fn: () => Promise<void>) => ({
  defer: true,
  fn: (d: Benchmark.Deferred) => {
    fn().then(() => d.resolve(), (e) => { throw e; });
  },
});

const out: string[] = [`integrity bench (${wasmFlavor} build)`];
const mb = (bytes: number, s: number) => (bytes / 1e6 / s).toFixed(0);

// 1. whole report vs sharp raw decode
{
  const bytes = new Uint8Array(readFileSync(pngFile));
  const meta = await sharp(bytes).metadata();
  const rows = await runSuite((s) => {
    s.add('integrityReport (PNG, with LSB)', asyncCase(async () => {
      const r = await integrityReport(bytes);
      if (!r.checks_performed.includes('LsbAnalysis')) throw new Error('LSB did not run');
    }));
    s.add('sharp .raw() decode', asyncCase(async () => {
      const { info } = await sharp(bytes).raw().toBuffer({ resolveWithObject: true });
      if (info.width !== meta.width) throw new Error('bad decode');
    }));
  });
  const [ours, peer] = rows;
  out.push(`\n${pngFile.split('/').pop()} (${meta.width}x${meta.height}, ${(bytes.length / 1e6).toFixed(2)} MB)`);
  out.push(`  ${ours.name.padEnd(34)} ${(ours.mean * 1000).toFixed(1).padStart(8)} ms mean, ${(ours.min * 1000).toFixed(1)} ms fastest`);
  out.push(`  ${peer.name.padEnd(34)} ${(peer.mean * 1000).toFixed(1).padStart(8)} ms mean, ${(peer.min * 1000).toFixed(1)} ms fastest`);
  out.push(`  report / decode = ${(ours.mean / peer.mean).toFixed(2)}x by mean, ${(ours.min / peer.min).toFixed(2)}x fastest-to-fastest (target <= 2x)`);
}

// 2. byte-level checks vs SHA-256, and 3. a JPEG report (no decode) vs SHA-256
for (const file of [...new Set([pngFile, bigFile]), jpgFile]) {
  const bytes = new Uint8Array(readFileSync(file));
  const expectedHash = createHash('sha256').update(bytes).digest('hex');
  const isPng = file.endsWith('.png');
  const rows = await runSuite((s) => {
    s.add('byte-level kernels', () => {
      const kb = KernelBytes.load(bytes);
      try {
        const end = isPng ? walkPng(kb).end : walkJpeg(kb).end;
        if (end <= 0) throw new Error('walk failed');
        scanSignatures(kb, 1, bytes.length);
        if (entropyProfile(kb).windows.length !== Math.ceil(bytes.length / 4096)) throw new Error('entropy');
      } finally {
        kb.release();
      }
    });
    if (!isPng) {
      s.add('integrityReport (JPEG)', asyncCase(async () => {
        const r = await integrityReport(bytes);
        if (r.checks_performed.length !== 4) throw new Error('checks');
      }));
    }
    s.add('node:crypto SHA-256', () => {
      if (createHash('sha256').update(bytes).digest('hex') !== expectedHash) throw new Error('hash');
    });
  });
  const peer = rows[rows.length - 1];
  out.push(`\n${file.split('/').pop()} (${(bytes.length / 1e6).toFixed(2)} MB)`);
  for (const r of rows) {
    const ratio = r === peer ? '' : `  (${(peer.mean / r.mean).toFixed(2)}x SHA-256's speed by mean, ${(peer.min / r.min).toFixed(2)}x fastest)`;
    out.push(`  ${r.name.padEnd(26)} ${(r.mean * 1000).toFixed(2).padStart(7)} ms = ${mb(bytes.length, r.mean).padStart(5)} MB/s mean, ${mb(bytes.length, r.min).padStart(5)} MB/s fastest${ratio}`);
  }
}
console.log(out.join('\n'));
