// The limit scan against the reader (issue 34 item 1): c2pa-limits.ts must find a
// manifest store, and count at least what the reader counts, whenever the reader reads
// one, or a store past the limits reaches the reader unmeasured. An earlier scan counted
// only APP11 segments whose CI bytes were `JP`; the reader (c2pa-rs) ignores them, so a
// JPEG with 3,000 assertions and other CI bytes held a decoder for seconds. Compared
// here: the fixtures (real manifests), files our writer signs in every container, each
// under targeted mutations (CI bytes, bytes between segments, fill bytes, sequence gaps,
// segments reordered, a foreign APP11 between continuations, an ID3 frame compressed or
// unsynchronised, XLBox headers) and seeded random byte changes in the headers.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { WasmReader } from '@contentauth/c2pa-wasm';
import { initReader, READER_FORMAT, READER_SETTINGS, readContentCredentials } from '../../src/media/c2pa.js';
import { writeContentCredentials } from '../../src/media/c2pa-write.js';
import { measureManifestStores } from '../../src/media/c2pa-limits.js';
import { generateSigningKey } from '../../src/lib/identity.js';
import { detectType } from '../../src/lib/detect.js';
import { seeded } from '../../src/cli/bench/random.js';

const test = suite('c2pa/limits-differential');
const FIX = join(import.meta.dirname, '..', 'fixtures');
const fixture = (dir: string, name: string) => new Uint8Array(readFileSync(join(FIX, dir, name)));
const key = generateSigningKey();

/** `file` signed by our writer with `extra` assertions, one of them `pad` bytes long (to spread a JPEG store over segments). */
function signed(file: Uint8Array, extra: number, pad = 0): Promise<Uint8Array> {
  const assertions = Array.from({ length: extra }, (_, i) => ({ label: `org.example.a${i}`, data: { i, pad: i === 0 ? 'x'.repeat(pad) : '' } }));
  return writeContentCredentials(file, {
    title: 'x', digitalSourceType: 'http://cv.iptc.org/newscodes/digitalsourcetype/digitalCapture', assertions, generator: { name: 'differential', version: '1' },
  }, { privateKeyPkcs8: key.privateKeyPkcs8, commonName: 'differential test' });
}

interface ReaderView { manifests: number; assertions: number }

/** What the reader itself reads from `bytes` (its manifests and their assertions), or null when it reads no store. */
async function readerView(bytes: Uint8Array): Promise<ReaderView | null> {
  const format = detectType(bytes)?.format;
  const mime = format === undefined ? undefined : READER_FORMAT[format];
  if (mime === undefined) return null;
  initReader();
  let reader: WasmReader;
  try {
    reader = await WasmReader.fromBytes(mime, bytes, READER_SETTINGS);
  } catch {
    return null;
  }
  try {
    const store = reader.manifestStore() as { manifests?: Record<string, { assertions?: unknown[] }> };
    const manifests = Object.values(store.manifests ?? {});
    return { manifests: manifests.length, assertions: manifests.reduce((n, m) => n + (m.assertions?.length ?? 0), 0) };
  } finally {
    reader.free();
  }
}

let compared = 0;
let read = 0;

/** The scan finds what the reader reads, for `bytes` (named `what` in a failure). */
async function agrees(bytes: Uint8Array, what: string): Promise<void> {
  const format = detectType(bytes)?.format;
  if (format === undefined) return;
  const scan = measureManifestStores(bytes, format);
  const r = await readerView(bytes);
  compared++;
  if (r === null) return;
  read++;
  const s = scan.size;
  assert.ok(s.stores >= 1 && s.manifests >= r.manifests && s.assertions >= r.assertions, `${what}: the reader read ${JSON.stringify(r)}, the scan found ${JSON.stringify(scan)}`);
}

// ---- JPEG segments ----

interface Segment { at: number; marker: number; end: number }

/** The segments before the first SOS, by offset (a well-formed file). */
function segments(b: Uint8Array): Segment[] {
  const out: Segment[] = [];
  for (let o = 2; o + 4 <= b.length;) {
    const marker = b[o + 1];
    const end = o + 2 + ((b[o + 2] << 8) | b[o + 3]);
    out.push({ at: o, marker, end });
    if (marker === 0xda) break;
    o = end;
  }
  return out;
}

const app11 = (b: Uint8Array) => segments(b).filter((s) => s.marker === 0xeb);

/** `b` with each APP11 segment rewritten by `f` (given its bytes, marker included, and its index among them). */
function eachApp11(b: Uint8Array, f: (seg: Buffer, i: number) => Buffer): Uint8Array {
  const parts: Buffer[] = [];
  let last = 0;
  app11(b).forEach((s, i) => {
    parts.push(Buffer.from(b.subarray(last, s.at)), f(Buffer.from(b.subarray(s.at, s.end)), i));
    last = s.end;
  });
  parts.push(Buffer.from(b.subarray(last)));
  return Buffer.concat(parts);
}

function jpegMutations(b: Uint8Array): [string, Uint8Array][] {
  const segs = app11(b);
  const out: [string, Uint8Array][] = [
    ['CI bytes changed', eachApp11(b, (s) => { const c = Buffer.from(s); c.write('XY', 4, 'latin1'); return c; })],
    ['bytes between segments', eachApp11(b, (s) => Buffer.concat([Buffer.from([0x00, 0x13, 0x37, 0x42]), s]))],
    ['fill bytes before the markers', eachApp11(b, (s) => Buffer.concat([Buffer.from([0xff, 0xff, 0xff]), s]))],
    ['sequence numbers with gaps', eachApp11(b, (s, i) => { const c = Buffer.from(s); c.writeUInt32BE(1 + 3 * i, 8); return c; })],
    ['a foreign APP11 of the same instance between continuations', eachApp11(b, (s, i) => {
      if (i !== 1) return s;
      const foreign = Buffer.alloc(40);
      foreign.writeUInt16BE(0xffeb, 0);
      foreign.writeUInt16BE(38, 2);
      foreign.write('JP', 4, 'latin1');
      s.copy(foreign, 6, 6, 8); // the same box instance
      foreign.writeUInt32BE(1, 8);
      return Buffer.concat([foreign, s]);
    })],
  ];
  if (segs.length >= 2) {
    const [x, y] = segs;
    out.push(['two segments swapped', Buffer.concat([b.subarray(0, x.at), b.subarray(y.at, y.end), b.subarray(x.end, y.at), b.subarray(x.at, x.end), b.subarray(y.end)])]);
  }
  return out;
}

// ---- ID3 ----

const syncsafe = (n: number) => Buffer.from([(n >> 21) & 0x7f, (n >> 14) & 0x7f, (n >> 7) & 0x7f, n & 0x7f]);
const unsyncsafe = (b: Uint8Array, o: number) => ((b[o] & 0x7f) << 21) | ((b[o + 1] & 0x7f) << 14) | ((b[o + 2] & 0x7f) << 7) | (b[o + 3] & 0x7f);

/** An ID3v2.4 file with its GEOB frames rewritten by `f` (given the frame's content; it answers new content and flags). */
function rewriteGeob(b: Uint8Array, f: (content: Buffer) => { content: Buffer; flags: number }): Uint8Array {
  assert.is(b[3], 4, 'the writer writes ID3v2.4');
  const end = 10 + unsyncsafe(b, 6);
  const frames: Buffer[] = [];
  for (let o = 10; o + 10 <= end && b[o] !== 0;) {
    const size = unsyncsafe(b, o + 4);
    const id = Buffer.from(b.subarray(o, o + 4)).toString('latin1');
    const content = Buffer.from(b.subarray(o + 10, o + 10 + size));
    if (id === 'GEOB') {
      const next = f(content);
      const head = Buffer.alloc(10);
      head.write('GEOB', 0, 'latin1');
      syncsafe(next.content.length).copy(head, 4);
      head.writeUInt16BE(next.flags, 8);
      frames.push(head, next.content);
    } else {
      frames.push(Buffer.from(b.subarray(o, o + 10 + size)));
    }
    o += 10 + size;
  }
  const body = Buffer.concat(frames);
  const header = Buffer.from(b.subarray(0, 10));
  syncsafe(body.length).copy(header, 6);
  return Buffer.concat([header, body, b.subarray(end)]);
}

const compressed = (c: Buffer) => ({ content: Buffer.concat([syncsafe(c.length), deflateSync(c)]), flags: 0x0008 | 0x0001 });
const unsynchronised = (c: Buffer) => {
  const out: number[] = [];
  for (let i = 0; i < c.length; i++) {
    out.push(c[i]);
    if (c[i] === 0xff && (i + 1 === c.length || c[i + 1] === 0x00 || c[i + 1] >= 0xe0)) out.push(0x00);
  }
  return { content: Buffer.from(out), flags: 0x0002 };
};

// ---- random byte changes ----


/** `count` copies of `b`, each with 1-4 bytes changed at offsets `where` picks. */
function fuzzed(b: Uint8Array, count: number, seed: number, where: (r: () => number) => number): [string, Uint8Array][] {
  const r = seeded(seed); // mulberry32: a failure names a reproducible case
  return Array.from({ length: count }, (_, i) => {
    const c = Uint8Array.from(b);
    const changes: string[] = [];
    for (let k = 1 + Math.floor(r() * 4); k > 0; k--) {
      const at = Math.min(c.length - 1, where(r));
      c[at] = Math.floor(r() * 256);
      changes.push(`${at}=${c[at]}`);
    }
    return [`seed ${seed} #${i} (${changes.join(' ')})`, c];
  });
}

test('the issue: a JPEG with 3,000 assertions and other CI bytes is measured and refused before the reader', async () => {
  const big = await signed(fixture('media', 'fruits.jpg'), 3000);
  const hidden = eachApp11(big, (s) => { const c = Buffer.from(s); c.write('ZZ', 4, 'latin1'); return c; });
  const m = measureManifestStores(hidden, 'jpeg');
  assert.is(m.over, 'it has over 1000 assertions');
  const started = performance.now();
  assert.equal(await readContentCredentials(hidden), { present: null, message: "not read: the manifest store is past the reader's limits (it has over 1000 assertions; docs/c2pa.md)" });
  assert.ok(performance.now() - started < 1000, 'refused without reading');
});

test('JPEG: the fixtures and a signed multi-segment store, as they are and mutated', async () => {
  const multi = await signed(fixture('media', 'fruits.jpg'), 20, 150_000);
  assert.ok(app11(multi).length >= 3, 'the store spans segments');
  const files: [string, Uint8Array][] = [
    ...['CA.jpg', 'CACA.jpg', 'E-sig-CA.jpg', 'XCA.jpg', 'adobe-20220124-E-clm-CAICAI.jpg', 'cloud.jpg', 'no_alg.jpg', 'no_manifest.jpg'].map((n): [string, Uint8Array] => [n, fixture('c2pa', n)]),
    ['signed, 3 segments', multi],
  ];
  const before = read;
  for (const [name, file] of files) {
    await agrees(file, name);
    for (const [how, m] of jpegMutations(file)) await agrees(m, `${name}, ${how}`);
    // random changes in the APP11 headers (CI, instance, sequence, box headers), and anywhere before the image data
    const heads = app11(file).map((s) => s.at);
    if (heads.length > 0) for (const [how, m] of fuzzed(file, 12, name.length, (r) => heads[Math.floor(r() * heads.length)] + Math.floor(r() * 40))) await agrees(m, `${name}, ${how}`);
    const sos = segments(file).at(-1)!.at;
    for (const [how, m] of fuzzed(file, 6, 7 * name.length, (r) => Math.floor(r() * sos))) await agrees(m, `${name}, ${how}`);
  }
  assert.ok(read - before > 40, `the reader read a store in ${read - before} of the cases: the comparison has something to compare`);
  // the mutations that keep the store readable are found with every assertion
  for (const [how, m] of jpegMutations(multi)) {
    const r = await readerView(m);
    if (r !== null) assert.is(measureManifestStores(m, 'jpeg').size.assertions, 22, how);
  }
});

test('the other containers: signed files as they are, with random header changes, and ID3 frames compressed or unsynchronised', async () => {
  const files: [string, Uint8Array][] = [
    ['png', await signed(fixture('integrity', 'butterfly.png'), 30)],
    ['gif', await signed(fixture('media', 'cat.gif'), 30)],
    ['mp4', await signed(fixture('media', 'cockatoo.mp4'), 30)],
    ['wav', await signed(fixture('audio', 'machine-wars-6s.wav'), 30)],
    ['mp3', await signed(fixture('audio', 'frontiers-25s.mp3'), 30)],
    ['video1.mp4', fixture('c2pa', 'video1.mp4')],
  ];
  for (const [name, file] of files) {
    await agrees(file, name);
    const at = Buffer.from(file).indexOf('jumb') - 4;
    // changes in the store's first boxes (headers, description boxes) and in the container's framing before it
    for (const [how, m] of fuzzed(file, 10, name.length, (r) => at + Math.floor(r() * 120))) await agrees(m, `${name}, ${how}`);
    for (const [how, m] of fuzzed(file, 6, 3 * name.length, (r) => Math.max(0, at - 64) + Math.floor(r() * 64))) await agrees(m, `${name}, ${how}`);
  }
  const mp3 = files.find(([n]) => n === 'mp3')![1];
  for (const [how, f] of [['compressed', compressed], ['unsynchronised', unsynchronised]] as const) {
    const m = rewriteGeob(mp3, f);
    await agrees(m, `mp3, GEOB ${how}`);
    assert.is(measureManifestStores(m, 'mp3').size.assertions, 32, how);
  }
});

test('mp3: a compressed GEOB frame cannot hide a store past the limits, nor a zip bomb hold the scan', async () => {
  const over = rewriteGeob(await signed(fixture('audio', 'frontiers-25s.mp3'), 1100), compressed);
  assert.is(Buffer.from(over).indexOf('jumb'), -1, 'the store is not in the file bytes as such');
  assert.is(measureManifestStores(over, 'mp3').over, 'it has over 1000 assertions');
  assert.is((await readContentCredentials(over)).present, null);
  // 40 MB of zeros, compressed to 40 KB, in a GEOB frame: over the byte limit, inflated no further than it
  const bomb = rewriteGeob(await signed(fixture('audio', 'frontiers-25s.mp3'), 1), () => compressed(Buffer.alloc(40 << 20)));
  assert.ok(bomb.length < (1 << 20));
  assert.match(String(measureManifestStores(bomb, 'mp3').over), /its JUMBF is over/);
});

test('a store box with an XLBox header (LBox 1) is found', async () => {
  const png = await signed(fixture('integrity', 'butterfly.png'), 5);
  const b = Buffer.from(png);
  const at = b.indexOf('jumb') - 4;
  const length = b.readUInt32BE(at);
  const xl = Buffer.alloc(16);
  xl.writeUInt32BE(1, 0);
  xl.write('jumb', 4, 'latin1');
  xl.writeUInt32BE(length + 8, 12);
  const store = Buffer.concat([xl, b.subarray(at + 8, at + length)]);
  const m = measureManifestStores(store, 'png');
  assert.is(m.size.stores, 1);
  assert.is(m.size.assertions, 7);
  assert.is(m.size.bytes, length + 8);
});

test('summary', () => {
  assert.ok(compared > 200, `${compared} files compared`);
  console.log(`  ${compared} files compared with the reader, ${read} of them read by it`);
});

test.run();
