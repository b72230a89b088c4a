// `provenant bench` as installed (the compiled CLI, dist/src/cli/main.js) on a small
// folder of real fixtures: originals found by content (a song named .dat), a duplicate
// counted once, files named as media that are none (text in photo.jpg, an empty .png, a
// truncated JPEG the decoder refuses) listed by name and reason, an unreadable file and
// a broken link listed and skipped, a peer that is not installed (fpcalc, PATH without it) reported as missing,
// file names with control characters shown escaped, --limit, --compare, usage errors.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compiledFile } from '../../src/lib/wasm.js';
import { withoutFileOverride } from '../helpers/unprivileged.js';
import type { BenchResult } from '../../src/cli/bench/run.js';

const test = suite('cli/bench-command');
const MAIN = compiledFile('src/cli/main.js');
const MEDIA = new URL('../fixtures/media/', import.meta.url).pathname;
const AUDIO = new URL('../fixtures/audio/', import.meta.url).pathname;
const HOSTILE = 'cut\x1b[2J\x07.jpg';
let dir: string;
let corpus: string;

test.before(() => {
  dir = mkdtempSync(join(tmpdir(), 'provenant-bench-cmd-'));
  chmodSync(dir, 0o755);
  corpus = join(dir, 'corpus');
  spawnSync('mkdir', ['-m', '755', corpus]);
  copyFileSync(join(MEDIA, 'fruits.jpg'), join(corpus, 'fruits.jpg'));
  copyFileSync(join(MEDIA, 'cat.gif'), join(corpus, 'cat.gif'));
  copyFileSync(join(MEDIA, 'cat.gif'), join(corpus, 'cat-copy.gif'));
  copyFileSync(join(AUDIO, 'frontiers-25s.mp3'), join(corpus, 'song.dat'));
  copyFileSync(join(MEDIA, 'cockatoo.mp4'), join(corpus, 'clip.mp4'));
  writeFileSync(join(corpus, 'notes.txt'), 'not media\n');
  writeFileSync(join(corpus, 'photo.jpg'), 'this is not a photo\n');
  writeFileSync(join(corpus, 'empty.PNG'), '');
  const jpeg = readFileSync(join(MEDIA, 'fruits.jpg'));
  writeFileSync(join(corpus, HOSTILE), jpeg.subarray(0, 3000));
  writeFileSync(join(corpus, 'secret.png'), readFileSync(join(MEDIA, 'cat.gif')));
  chmodSync(join(corpus, 'secret.png'), 0o000);
  symlinkSync(join(corpus, 'gone.jpg'), join(corpus, 'broken-link.jpg'));
});
test.after(() => {
  rmSync(dir, { recursive: true, force: true });
});

interface Run { status: number | null; stdout: string; stderr: string }
/** Runs the installed CLI; `unprivileged`: without root's file-permission override, so the unreadable file is unreadable (test/helpers/unprivileged.ts). */
function bench(args: string[], unprivileged = false): Run {
  const { options, via } = unprivileged ? withoutFileOverride() : { options: {}, via: [] as string[] };
  const [cmd, ...prefix] = [...via, process.execPath];
  // no fpcalc anywhere on this PATH: the peer is missing whatever the machine has
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: join(dir, 'no-bin'), PROVENANT_LOG_LEVEL: 'silent' };
  delete env.FPCALC;
  const r = spawnSync(cmd, [...prefix, MAIN, 'bench', ...args], { cwd: dir, env, encoding: 'utf8', timeout: 300_000, maxBuffer: 64 << 20, ...options });
  return { status: r.status, stdout: String(r.stdout), stderr: String(r.stderr) };
}
const show = (r: Run) => `exit ${r.status}\nstderr: ${r.stderr}`;
const FAST = ['--index-size', '2000', '--min-time', '0', '--workers', '1'];

let first: BenchResult;

test('--json: originals by content, duplicates once, junk named with its reason, the unreadable listed and skipped, fpcalc missing', () => {
  const r = bench([corpus, '--json', ...FAST], true);
  assert.is(r.status, 0, show(r));
  first = JSON.parse(r.stdout) as BenchResult;
  const c = first.conditions;
  assert.equal(c.corpus.originals, { image: 2, audio: 1, video: 1 });
  assert.is(c.corpus.duplicates, 1);
  assert.is(c.corpus.otherFiles, 1, 'notes.txt: its name claims no media type');
  assert.is(c.corpus.junk, 3);
  assert.is(c.corpus.source[0], corpus);
  assert.equal([c.suite.name, c.suite.version, c.seed, c.indexSize], ['provenant-variants', 2, 1, 2000]);
  assert.ok(c.machine.cores >= 1 && c.versions.node === process.version && c.versions.ffmpeg.length > 0);
  const skipped = Object.fromEntries(first.skipped.map((s) => [s.path.slice(corpus.length + 1), s.reason]));
  assert.equal(Object.keys(skipped).sort(), ['broken-link.jpg', 'secret.png']);
  assert.match(skipped['secret.png'], 'permission denied');
  assert.match(skipped['broken-link.jpg'], 'no such file');
  // every file whose name claims a media type and whose content is none, in path order
  assert.equal(first.junk.map((j) => [j.path.slice(corpus.length + 1), j.claimed]), [[HOSTILE, 'image'], ['empty.PNG', 'image'], ['photo.jpg', 'image']]);
  const junk = Object.fromEntries(first.junk.map((j) => [j.path.slice(corpus.length + 1), j.reason]));
  assert.is(junk['photo.jpg'], 'no image inside: the content is text');
  assert.is(junk['empty.PNG'], 'empty file');
  assert.match(junk[HOSTILE], /^decoder refused: cannot decode this jpeg file: \S/);
  const fpcalc = first.peers.find((p) => p.name === 'fpcalc')!;
  assert.equal([fpcalc.found, fpcalc.kind], [false, 'audio']);
  assert.match(fpcalc.detail, 'not found');
  assert.not.ok(first.quality.some((q) => q.hash === 'fpcalc'), 'a missing peer has no figures');
  // sharp-phash and imghash are installed here (devDependencies): found, named with their version
  for (const name of ['sharp-phash', 'imghash']) assert.match(first.peers.find((p) => p.name === name)!.detail, /^\d+\.\d+\.\d+$/);
  assert.match(first.peers.find((p) => p.name === 'opencv-orb')!.detail, /^@techstark\/opencv-js \d+\.\d+\.\d+$/);

  const hashes = first.quality.map((q) => q.hash);
  assert.equal(hashes, ['ImagePHash', 'PDQ', 'Features', 'ISCC-Image', 'sharp-phash', 'imghash', 'opencv-orb', 'AudioChromaprint', 'ISCC-Audio', 'VideoPHash', 'vPDQ', 'ISCC-Video']);
  // issue 33: the ISCC Content-Code under the soft binding's rule (8 bits) and verify-file's source (4): a resize keeps it
  const iscc = first.quality.find((q) => q.hash === 'ISCC-Image')!;
  assert.equal(Object.keys(iscc.transforms[0].matched).sort(), ['binding<=8', 'source<=4']);
  assert.ok(iscc.transforms.find((t) => t.transform === 'resize-50')!.matched['binding<=8'] >= 1, JSON.stringify(iscc.transforms.find((t) => t.transform === 'resize-50')));
  const image = first.quality[0];
  assert.is(image.transforms.length, 21); // suite v2: v1's 12 edits and issue 32's 9
  assert.ok(image.transforms.every((t) => t.variants === 2 && t.notMade === 0));
  assert.equal(image.falseMatches.pairs, 1);
  const audio = first.quality.find((q) => q.hash === 'AudioChromaprint')!;
  assert.equal(audio.transforms.find((t) => t.transform === 'mp3-64k')!.matched, { band: 1, 'verify-file': 1, 'verify-fuzzy': 1 });
  const video = first.quality.find((q) => q.hash === 'VideoPHash')!;
  assert.is(video.transforms.find((t) => t.transform === 'reencode')!.matched['verify-file'], 1);
  assert.is(video.falseMatches.pairs, 0, 'one video: no pair');
  assert.is(video.roc, null);
  assert.equal(first.speed.map((s) => s.kind), ['image', 'audio', 'video']);
  for (const s of first.speed) assert.ok(s.filesPerSecond > 0 && s.floor !== null && s.floor.filesPerSecond > 0, JSON.stringify(s));
  const index = first.index.find((i) => i.hashType === 'ImagePHash')!;
  assert.equal([index.stored, index.synthetic], [2000, 1998]);
  assert.ok(index.bytesPerFingerprint > 8 && index.bytesPerFingerprint < 1000, String(index.bytesPerFingerprint)); // bucket chunks dominate at 2000
  assert.ok(index.p50Ms !== null && index.p99Ms! >= index.p50Ms);
  assert.is(first.server, null);
  assert.is(r.stderr, '', 'no progress bar when stderr is not a terminal');
});

test('the tables: control characters in file names made visible; the missing peer said; --compare prints the differences', () => {
  const old = structuredClone(first);
  const t = old.quality[0].transforms.find((x) => x.transform === 'resize-50')!;
  t.matched['verify-file'] -= 0.5;
  const oldFile = join(dir, 'old.json');
  writeFileSync(oldFile, JSON.stringify(old));
  chmodSync(oldFile, 0o644);
  const r = bench([corpus, '--compare', oldFile, ...FAST], true);
  assert.is(r.status, 0, show(r));
  assert.not.ok(r.stdout.includes('\x1b') || r.stdout.includes('\x07'), 'no raw control character reaches the terminal');
  assert.ok(r.stdout.includes('cut\\x1b[2J\\x07.jpg'), r.stdout);
  // the junk, every one by name and reason, the hostile name escaped
  const junk = r.stdout.split('\n\n').find((part) => part.startsWith('Named as media but not'));
  assert.ok(junk !== undefined, r.stdout);
  const lines = junk!.trimEnd().split('\n');
  assert.is(lines[0], 'Named as media but not (3):');
  assert.is(lines[1].slice(0, corpus.length + 2), `  ${corpus}`);
  assert.equal(lines.slice(1).map((l) => l.slice(corpus.length + 3).replace(/decoder refused: .*/, 'decoder refused: ...')), [
    'cut\\x1b[2J\\x07.jpg: decoder refused: ...',
    'empty.PNG: empty file',
    'photo.jpg: no image inside: the content is text',
  ]);
  assert.match(r.stdout, /1 other files, 3 named as media but not, 2 skipped\)/);
  assert.match(r.stdout, /fpcalc missing \(not found on PATH/);
  assert.match(r.stdout, /^provenant bench: suite provenant-variants v2, seed 1, /);
  assert.match(r.stdout, /ImagePHash \(provenant, image\): share of variants matched, of 2 originals/);
  assert.match(r.stdout, /Compared with the run of /);
  assert.match(r.stdout, /ImagePHash resize-50 verify-file\s+\S+ %\s+\S+ %\s+\+50\.0/);
});

test('--limit N: N originals, chosen by the seed', () => {
  const r = bench([corpus, '--json', '--limit', '1', ...FAST]);
  assert.is(r.status, 0, show(r));
  const result = JSON.parse(r.stdout) as BenchResult;
  const o = result.conditions.corpus.originals;
  assert.is(o.image + o.audio + o.video, 1);
  assert.is(result.conditions.corpus.limit, 1);
});

test('usage errors exit 2; a --compare file that is not a bench result exits 1 before any work', () => {
  for (const [args, says] of [
    [['--limit', '0'], '--limit'],
    [['--seed', 'x'], '--seed'],
    [['--concurrency', '2'], '--server'],
    [['--server', 'ftp://example.org'], '--server'],
    [['--duration', '0', '--server', 'http://127.0.0.1:1'], '--duration'],
    [['--frobnicate'], '--frobnicate'],
    [['-'], 'DIR'],
  ] as [string[], string][]) {
    const r = bench(args);
    assert.is(r.status, 2, `${args.join(' ')}: ${show(r)}`);
    assert.is(r.stdout, '');
    assert.match(r.stderr, says);
    assert.match(r.stderr, 'usage: provenant bench');
  }
  const notBench = join(dir, 'other.json');
  writeFileSync(notBench, '{"a": 1}');
  const r = bench([corpus, '--compare', notBench]);
  assert.is(r.status, 1, show(r));
  assert.match(r.stderr, 'is not the --json output of provenant bench');
  const help = bench(['--help']);
  assert.is(help.status, 0);
  assert.match(help.stdout, /^usage: provenant bench \[DIR\.\.\.\]/);
});

test.run();
