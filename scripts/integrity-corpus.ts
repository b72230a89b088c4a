// Integrity checks over the dev corpus (/tmp/provenant-corpus or $PROVENANT_CORPUS):
// 1. false positives: the share of clean files with a Warning or Critical issue,
//    per family, with the issues that caused them;
// 2. LSB detection rate against the embedded fraction (100, 50, 25, 10 %) on PNG and
//    TIFF images (random message bits replace the LSB of that fraction of samples).
// Usage: node --import tsx scripts/integrity-corpus.ts [--max N] [--lsb-max N]
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { integrityReport, decodeForLsb } from '../src/media/integrity.js';
import { lsbAnalysis, type FileContext } from '../src/media/integrity/checks.js';
import { detectType } from '../src/lib/detect.js';

const root = process.env.PROVENANT_CORPUS ?? '/tmp/provenant-corpus';
const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const maxFiles = arg('--max', 100000);
const lsbMax = arg('--lsb-max', 120);

function corpusFiles(): string[] {
  const base = join(root, 'files');
  if (!existsSync(base)) return [];
  const out: string[] = [];
  for (const kind of readdirSync(base)) for (const ext of readdirSync(join(base, kind))) {
    for (const f of readdirSync(join(base, kind, ext))) out.push(join(base, kind, ext, f));
  }
  return out.sort();
}

// deterministic xorshift so runs are comparable
let seed = 0x9e3779b9;
function rand(): number {
  seed ^= seed << 13; seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5; seed >>>= 0;
  return seed / 0x100000000;
}

export function embedLsb(data: Uint8Array, channels: number, fraction: number): Uint8Array {
  const out = data.slice();
  const colour = channels === 2 || channels === 4 ? channels - 1 : channels;
  for (let i = 0; i < out.length; i++) {
    if (i % channels >= colour) continue;
    if (rand() < fraction) out[i] = (out[i] & 0xfe) | (rand() < 0.5 ? 1 : 0);
  }
  return out;
}

const files = corpusFiles().slice(0, maxFiles);
if (files.length === 0) {
  console.log(`no corpus at ${root}`);
  process.exit(0);
}

// 1. false positives
const perFamily = new Map<string, { files: number; flagged: number }>();
const reasons = new Map<string, number>();
const flaggedFiles: string[] = [];
let totalMs = 0;
for (const f of files) {
  const family = f.split('/').slice(-3, -1).join('/');
  const t0 = performance.now();
  const r = await integrityReport(f);
  totalMs += performance.now() - t0;
  const bad = r.issues_found.filter((i) => i.severity !== 'Info');
  const e = perFamily.get(family) ?? { files: 0, flagged: 0 };
  e.files++;
  if (bad.length > 0) {
    e.flagged++;
    flaggedFiles.push(`${f.split('/').pop()}: ${bad.map((b) => `${b.check}/${b.severity}: ${b.description}`).join(' | ')}`);
    for (const b of bad) {
      const key = `${b.check}: ${b.description.replace(/[0-9.]+/g, 'N').slice(0, 70)}`;
      reasons.set(key, (reasons.get(key) ?? 0) + 1);
    }
  }
  perFamily.set(family, e);
}
let flagged = 0;
console.log('family\tfiles\tflagged (Warning or Critical)');
for (const [k, v] of [...perFamily.entries()].sort()) {
  flagged += v.flagged;
  console.log(`${k}\t${v.files}\t${v.flagged} (${((100 * v.flagged) / v.files).toFixed(1)} %)`);
}
console.log(`all\t${files.length}\t${flagged} (${((100 * flagged) / files.length).toFixed(2)} %)   mean report time ${(totalMs / files.length).toFixed(1)} ms`);
console.log('\nreasons:');
for (const [k, v] of [...reasons.entries()].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${v}\t${k}`);
if (process.argv.includes('--list')) for (const l of flaggedFiles) console.log(`  ${l}`);

// 2. LSB detection rate
const lsbFiles = files.filter((f) => {
  const t = detectType(readFileSync(f).subarray(0, 64));
  return t !== null && (t.format === 'png' || t.format === 'tiff' || t.format === 'bmp');
});
const fractions = [1, 0.5, 0.25, 0.1, 0];
const detected = new Map<number, { n: number; warn: number }>(fractions.map((p) => [p, { n: 0, warn: 0 }]));
let used = 0;
for (const f of lsbFiles) {
  if (used >= lsbMax) break;
  const bytes = new Uint8Array(readFileSync(f));
  // palette PNGs are out of scope for pixel LSB statistics
  if (bytes[25] === 3 && detectType(bytes)?.format === 'png') continue;
  let img;
  try {
    img = await decodeForLsb(bytes, detectType(bytes)!.format);
  } catch {
    continue;
  }
  if (img.width * img.height < 4096 || img.width * img.height > 8_000_000) continue;
  used++;
  const ctx = { structure: { pngColourType: undefined } } as unknown as FileContext;
  for (const p of fractions) {
    const data = p === 0 ? img.data : embedLsb(img.data, img.channels, p);
    const { issues } = lsbAnalysis(ctx, { ...img, data });
    const d = detected.get(p)!;
    d.n++;
    if (issues.some((i) => i.severity !== 'Info')) d.warn++;
  }
}
console.log(`\nLSB replacement detection on ${used} PNG/TIFF/BMP images (Warning or above):`);
for (const p of fractions) {
  const d = detected.get(p)!;
  console.log(`  ${p === 0 ? 'clean' : `${p * 100} %`}\t${d.warn}/${d.n} (${((100 * d.warn) / Math.max(1, d.n)).toFixed(1)} %)`);
}
