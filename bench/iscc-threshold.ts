// The ISCC Content-Code's match threshold (issue 33 part 2): for originals of the dev
// corpus and their edited copies (`provenant bench`'s variant suite v2: every image edit,
// every audio edit), the Hamming distance between the original's 64-bit Content-Code and
// the copy's (examineFile, as the vault and the pool make them), per edit, and whether
// verify-file's other sources find the copy (ImagePHash or AudioChromaprint: a band at the
// same position and similarity >= 60; PDQ: the copy's dihedral hashes within 31 bits of
// the original's, qualities >= 50), so that the ISCC's own share of copies is seen; and
// the distances between distinct originals of one kind (every pair, over up to
// PAIR_IMAGES images), whose low tail is where false matches begin: among every pair, and
// among pairs from different Debian packages (the corpus holds derived pictures, such as
// one photo with keypoints drawn on it, within a package; and a few files in two
// packages, which are listed). Codes the index leaves out (too few or too many bits set:
// flat pictures, clips too short for Chromaprint words; src/lib/iscc-index.ts) are left
// out here too, and counted.
// Not a timing: a measurement for docs/iscc.md.
//   node --import tsx bench/iscc-threshold.ts [MAX_IMAGES] [MAX_AUDIO] [PAIR_IMAGES]
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { detectType, type MediaKind } from '../src/lib/detect.js';
import { isccDistance } from '../src/lib/iscc-codec.js';
import { isccIndexKey } from '../src/lib/iscc-index.js';
import { examineFile, type Examination } from '../src/media/examine.js';
import { fingerprintSimilarity } from '../src/lib/hamming.js';
import { pdqDistance } from '../src/lib/pdq.js';
import { SUITE_TRANSFORMS, type Original } from '../src/cli/bench/suite.js';
import { streamFor } from '../src/cli/bench/random.js';

const CORPUS = '/tmp/provenant-corpus/files';
const MAX_IMAGES = Number(process.argv[2] ?? 80);
const MAX_AUDIO = Number(process.argv[3] ?? 30);
const PAIR_IMAGES = Number(process.argv[4] ?? 0);
const THRESHOLDS = [0, 2, 4, 6, 8, 10, 12, 14, 16];

if (!existsSync(CORPUS)) {
  console.log(`no dev corpus at ${CORPUS}: build it with ../shared/corpus/build-dev-corpus.sh`);
  process.exit(0);
}

/** Files of a kind, sorted, evenly picked up to `max` (sizes 20 KB to 20 MB). */
function pick(kind: MediaKind, max: number): string[] {
  const dir = join(CORPUS, kind);
  const all = readdirSync(dir).flatMap((ext) => readdirSync(join(dir, ext)).map((f) => join(dir, ext, f)))
    .filter((f) => { const s = statSync(f).size; return s >= 20_000 && s <= 20_000_000; })
    .sort();
  const n = Math.min(max, all.length);
  return Array.from({ length: n }, (_, i) => all[Math.floor((i * all.length) / n)]);
}

let contentless = 0;

async function examined(input: string): Promise<Examination | null> {
  try {
    const found = await examineFile(input);
    const code = found.iscc?.content ?? null;
    if (code !== null && isccIndexKey(code) === null) contentless++;
    return code !== null && isccIndexKey(code) !== null ? found : null;
  } catch {
    return null;
  }
}

/** Whether verify-file's other sources find `copy` for `original` (see the top). */
function othersFind(original: Examination, copy: Examination): boolean {
  const a = original.fingerprint;
  const b = copy.fingerprint;
  if (a !== null && b !== null && a.hash_type === b.hash_type && a.bands.some((band, i) => band.join() === b.bands[i]?.join())) {
    if ((fingerprintSimilarity(a, b) ?? 100) >= 60) return true;
  }
  const p = original.pdq_hash;
  const q = copy.pdq_hash;
  if (p?.hash_type === 'PDQ' && q?.hash_type === 'PDQ' && p.quality >= 50 && q.quality >= 50) {
    const variants = copy.pdq_dihedral ?? [q.hash_value];
    if (Math.min(...variants.map((h) => pdqDistance(h, p.hash_value))) <= 31) return true;
  }
  return false;
}

const work = mkdtempSync(join(tmpdir(), 'iscc-threshold-'));
try {
  for (const [kind, max] of [['image', MAX_IMAGES], ['audio', MAX_AUDIO]] as const) {
    const files = pick(kind, max);
    const originals: { path: string; code: string }[] = [];
    const genuine = new Map<string, number[]>();
    /** Per edit and threshold: copies the ISCC finds that the other sources miss. */
    const onlyIscc = new Map<string, number[]>();
    const missedByOthers = new Map<string, number>();
    const lost = new Map<string, number>();
    for (const [i, path] of files.entries()) {
      const found = await examined(path);
      const format = detectType(new Uint8Array(readFileSync(path)))?.format;
      if (found === null || format === undefined) continue;
      const code = found.iscc!.content!;
      originals.push({ path, code });
      const original: Original = { path, kind, format };
      for (const t of SUITE_TRANSFORMS[2][kind]) {
        let d: number | null = null;
        try {
          const out = await t.make(original, new Uint8Array(readFileSync(path)), join(work, `${i}-${t.id}`), streamFor(i, t.id));
          const copy = await examined(out);
          rmSync(out, { force: true });
          if (copy !== null) {
            d = isccDistance(code, copy.iscc!.content!);
            if (!othersFind(found, copy)) {
              missedByOthers.set(t.id, (missedByOthers.get(t.id) ?? 0) + 1);
              const only = onlyIscc.get(t.id) ?? onlyIscc.set(t.id, THRESHOLDS.map(() => 0)).get(t.id)!;
              THRESHOLDS.forEach((th, k) => { if (d! <= th) only[k]++; });
            }
          }
        } catch {
          // the edit could not be made (too short to trim, ...): not counted
        }
        if (d === null) lost.set(t.id, (lost.get(t.id) ?? 0) + 1);
        else (genuine.get(t.id) ?? genuine.set(t.id, []).get(t.id)!).push(d);
      }
      process.stderr.write(`\r${kind}: ${i + 1}/${files.length}`);
    }
    process.stderr.write('\n');
    // more originals for the pairs alone (no edits)
    if (kind === 'image' && PAIR_IMAGES > originals.length) {
      const have = new Set(originals.map((o) => o.path));
      for (const [i, path] of pick('image', PAIR_IMAGES).entries()) {
        if (have.has(path)) continue;
        const found = await examined(path);
        if (found !== null) originals.push({ path, code: found.iscc!.content! });
        process.stderr.write(`\rpairs: ${i + 1}/${PAIR_IMAGES}`);
      }
      process.stderr.write('\n');
    }
    const pairs: number[] = [];
    const crossPairs: number[] = [];
    const close: string[] = [];
    const pkg = (path: string) => path.split('/').pop()!.split('__')[0];
    for (let a = 0; a < originals.length; a++) {
      for (let b = a + 1; b < originals.length; b++) {
        const d = isccDistance(originals[a].code, originals[b].code); // same kind, so of one type
        pairs.push(d);
        if (pkg(originals[a].path) !== pkg(originals[b].path)) {
          crossPairs.push(d);
          if (d <= 12) close.push(`${d}  ${originals[a].path.split('/').pop()}  ${originals[b].path.split('/').pop()}`);
        }
      }
    }
    pairs.sort((x, y) => x - y);
    console.log(`\n## ${kind}: ${originals.length} originals (${contentless} codes left out so far: too few or too many bits set), ${pairs.length} pairs of distinct originals, ${crossPairs.length} from different packages`);
    console.log(`distinct pairs: min ${pairs[0]}, 0.1 % ${pairs[Math.floor(pairs.length * 0.001)]}, 1 % ${pairs[Math.floor(pairs.length * 0.01)]}, median ${pairs[pairs.length >> 1]}`);
    console.log(`| edit | copies | median d | ${THRESHOLDS.map((t) => `<= ${t}`).join(' | ')} |`);
    console.log(`|---|---|---|${THRESHOLDS.map(() => '---').join('|')}|`);
    for (const [id, ds] of genuine) {
      ds.sort((x, y) => x - y);
      console.log(`| ${id} | ${ds.length}${lost.get(id) ? ` (+${lost.get(id)} without a code)` : ''} | ${ds[ds.length >> 1]} | ${THRESHOLDS.map((t) => `${((100 * ds.filter((d) => d <= t).length) / ds.length).toFixed(0)} %`).join(' | ')} |`);
    }
    console.log(`| distinct originals: false matches | ${pairs.length} | ${pairs[pairs.length >> 1]} | ${THRESHOLDS.map((t) => String(pairs.filter((d) => d <= t).length)).join(' | ')} |`);
    console.log(`| distinct originals of different packages: false matches | ${crossPairs.length} | ${crossPairs.sort((x, y) => x - y)[crossPairs.length >> 1]} | ${THRESHOLDS.map((t) => String(crossPairs.filter((d) => d <= t).length)).join(' | ')} |`);
    console.log(`\ncopies verify-file's other sources miss, and of those the ISCC finds:`);
    console.log(`| edit | missed | ${THRESHOLDS.map((t) => `<= ${t}`).join(' | ')} |`);
    console.log(`|---|---|${THRESHOLDS.map(() => '---').join('|')}|`);
    for (const [id, n] of missedByOthers) console.log(`| ${id} | ${n} | ${onlyIscc.get(id)!.join(' | ')} |`);
    if (close.length > 0) console.log(`pairs from different packages within 12 bits:\n  ${close.slice(0, 40).join('\n  ')}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
