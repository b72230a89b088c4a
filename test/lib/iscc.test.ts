import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import {
  imageCode, audioCode, videoCode, textCode, mixedCode, dataCode, instanceCode, isccCode,
  createDataHasher, createInstanceHasher, decodeIscc, isccToBytes, isccFromBytes, isccDecompose, isccDistance,
  isccTypeName, isccImagePixels, encodeUnit, base32Encode, base32Decode, textCollapse, textClean, xxh32, IsccError, MT, ST_CC,
} from '../../src/lib/iscc.js';
import { blake3 } from '../../src/lib/blake3.js';
import { loadKernel, wasmFlavor } from '../../src/lib/wasm.js';
import { randomBytes, rng } from '../helpers/random.js';

const isIsccError = (e: unknown): boolean => e instanceof IsccError;
type Case = { inputs: unknown[]; outputs: Record<string, unknown> };
const data = JSON.parse(readFileSync(new URL('../fixtures/iscc/data.json', import.meta.url), 'utf8')) as Record<string, Record<string, Case>>;

/** The reference's "stream:<hex>" inputs as bytes. */
function streamBytes(s: unknown): Uint8Array {
  assert.type(s, 'string');
  assert.ok((s as string).startsWith('stream:'));
  return Uint8Array.from(Buffer.from((s as string).slice(7), 'hex'));
}

const GENERATORS: Record<string, (...args: any[]) => unknown> = {
  gen_image_code_v0: (pixels: number[], bits: number) => imageCode(pixels, bits),
  gen_audio_code_v0: (cv: number[], bits: number) => audioCode(cv, bits),
  gen_video_code_v0: (frames: number[][], bits: number) => videoCode(frames, bits),
  gen_text_code_v0: (text: string, bits: number) => textCode(text, bits),
  gen_mixed_code_v0: (codes: string[], bits: number) => mixedCode(codes, bits),
  gen_data_code_v0: (stream: string, bits: number) => dataCode(streamBytes(stream), bits),
  gen_instance_code_v0: (stream: string, bits: number) => instanceCode(streamBytes(stream), bits),
  gen_iscc_code_v0: (codes: string[]) => isccCode(codes),
};

const counts: Record<string, number> = {};
for (const [fn, cases] of Object.entries(data)) {
  if (fn === '_metadata' || fn === 'gen_meta_code_v0') continue;
  test(`conformance (${wasmFlavor} build): every case of ${fn}`, () => {
    const gen = GENERATORS[fn];
    assert.ok(gen, `no generator for ${fn}`);
    for (const [name, c] of Object.entries(cases)) {
      const got = gen(...c.inputs);
      assert.equal(got, c.outputs, `${fn} ${name}`);
      counts[fn] = (counts[fn] ?? 0) + 1;
    }
    assert.is(counts[fn], Object.keys(cases).length);
  });
}

test('the same vectors through the streaming hashers, fed in pieces of every size up to 9', () => {
  for (const fn of ['gen_data_code_v0', 'gen_instance_code_v0'] as const) {
    for (const [name, c] of Object.entries(data[fn])) {
      const bytes = streamBytes(c.inputs[0]);
      const bits = c.inputs[1] as number;
      for (let piece = 1; piece <= 9; piece++) {
        const h = fn === 'gen_data_code_v0' ? createDataHasher() : createInstanceHasher();
        for (let at = 0; at < bytes.length; at += piece) h.update(bytes.subarray(at, at + piece));
        assert.equal(h.code(bits), c.outputs, `${fn} ${name} in pieces of ${piece}`);
      }
    }
  }
});

test('a data stream in any pieces gives the one-shot Data-Code (chunks crossing updates are carried)', () => {
  const next = rng(7);
  for (const n of [0, 1, 255, 256, 257, 640, 8191, 8192, 8193, 100_000, 300_000]) {
    const bytes = randomBytes(next, n);
    const want = dataCode(bytes, 256).iscc;
    const h = createDataHasher();
    for (let at = 0; at < n;) {
      const len = 1 + ((next() * 20_000) | 0);
      h.update(bytes.subarray(at, at + len));
      at += len;
    }
    assert.is(h.code(256).iscc, want, `length ${n}`);
  }
  // long runs of one value cut at the maximum chunk size, 8192
  const zeros = new Uint8Array(50_000);
  assert.is(dataCode([zeros.subarray(0, 12_345), zeros.subarray(12_345)]).iscc, dataCode(zeros).iscc);
});

test('interleaved data hashers keep their own state', () => {
  const next = rng(8);
  const a = randomBytes(next, 40_000);
  const b = randomBytes(next, 30_000);
  const ha = createDataHasher();
  const hb = createDataHasher();
  for (let i = 0; i < 10; i++) {
    ha.update(a.subarray(i * 4000, (i + 1) * 4000));
    hb.update(b.subarray(i * 3000, (i + 1) * 3000));
    dataCode(b.subarray(0, 999));
  }
  assert.is(ha.code().iscc, dataCode(a).iscc);
  assert.is(hb.code().iscc, dataCode(b).iscc);
});

test('async streams give the same codes as bytes', async () => {
  const bytes = randomBytes(rng(9), 70_000);
  async function* pieces() {
    for (let at = 0; at < bytes.length; at += 4096) yield bytes.subarray(at, at + 4096);
  }
  assert.equal(await dataCode(pieces(), 128), dataCode(bytes, 128));
  assert.equal(await instanceCode(pieces(), 256), instanceCode(bytes, 256));
});

test('the Instance-Code is BLAKE3 of the bytes, its datahash the multihash', () => {
  const bytes = randomBytes(rng(10), 5000);
  const r = instanceCode(bytes, 256);
  assert.is(r.datahash, `1e20${Buffer.from(blake3(bytes)).toString('hex')}`);
  assert.is(r.filesize, 5000);
  assert.equal(decodeIscc(r.iscc).body, blake3(bytes));
});

test('videoCode: a repeated frame counts once, whatever its values', () => {
  const a = Array.from({ length: 380 }, (_, i) => (i * 7919) % 60000);
  const b = a.map((v, i) => (i % 3 ? v : v + 1));
  assert.is(videoCode([a, b, a, a, b], 256).iscc, videoCode([b, a], 256).iscc);
  const frames = data.gen_video_code_v0.test_0001_multiple_frames_128.inputs[0] as number[][];
  assert.is(videoCode(Uint8Array.from(frames.flat()), 128).iscc, data.gen_video_code_v0.test_0001_multiple_frames_128.outputs.iscc);
});

test('xxh32: the published values', () => {
  // xxHash's own test values (xxhsum): "" -> 02cc5d05, "abc" -> 32d153ff
  assert.is(xxh32(new Uint8Array(0)), 0x02cc5d05);
  assert.is(xxh32(new TextEncoder().encode('abc')), 0x32d153ff);
});

test('codec: string <-> bytes <-> fields, round trips; the header of each kind', () => {
  const image = imageCode(data.gen_image_code_v0.test_0003_img_256.inputs[0] as number[], 256).iscc;
  const u = decodeIscc(image);
  assert.equal([u.mainType, u.subType, u.version, u.bits], [MT.CONTENT, ST_CC.IMAGE, 0, 256]);
  assert.is(isccFromBytes(isccToBytes(image)), image);
  assert.is(decodeIscc(image.toLowerCase()).bits, 256);
  assert.is(encodeUnit(u.mainType, u.subType, u.version, 64, u.body), imageCode(data.gen_image_code_v0.test_0003_img_256.inputs[0] as number[], 64).iscc);
  assert.is(isccTypeName(image), 'CONTENT-IMAGE-V0-256');
  const code = data.gen_iscc_code_v0.test_0000_standard;
  assert.is(isccTypeName(code.outputs.iscc as string), 'ISCC-TEXT-V0-MCDI');
  // decomposing the ISCC-CODE gives the 64-bit prefixes of its units, which compose to it again
  const units = isccDecompose(code.outputs.iscc as string);
  assert.is(units.length, 4);
  assert.is(isccCode(units).iscc, code.outputs.iscc);
  for (const [i, unit] of units.entries()) {
    const original = decodeIscc((code.inputs[0] as string[]).slice().sort((a, b) => decodeIscc(a).mainType - decodeIscc(b).mainType)[i]);
    assert.equal(decodeIscc(unit).body, original.body.subarray(0, 8));
  }
  for (const bytes of [new Uint8Array([1, 2, 3]), new Uint8Array(0), randomBytes(rng(11), 37)]) {
    assert.equal(base32Decode(base32Encode(bytes)), bytes);
  }
  assert.is(base32Encode(new TextEncoder().encode('foobar')), 'MZXW6YTBOI'); // RFC 4648 section 10
});

test('isccCode: wide Data and Instance; the errors of bad unit sets', () => {
  const bytes = randomBytes(rng(12), 3000);
  const d = dataCode(bytes, 128).iscc;
  const i = instanceCode(bytes, 128).iscc;
  const wide = isccCode([d, i], { wide: true }).iscc;
  assert.is(isccTypeName(wide), 'ISCC-WIDE-V0-WIDE');
  assert.equal(isccDecompose(wide), [d, i]);
  assert.is(isccTypeName(isccCode([d, i]).iscc), 'ISCC-SUM-V0-DI');
  assert.throws(() => isccCode([d]), isIsccError);
  assert.throws(() => isccCode([d, d]), /Instance-Code/);
  assert.throws(() => isccCode([textCode('a').iscc, imageCode(new Array(1024).fill(7)).iscc, d, i]), /same SubType/);
});

test('isccDistance: same-type units only; over the shorter body', () => {
  const a = new Array(1024).fill(0).map((_, i) => (i * 7) % 256);
  const b = a.slice();
  b[5] = 255;
  b[600] = 0;
  const ca = imageCode(a, 256).iscc;
  const cb = imageCode(b, 256).iscc;
  const d = isccDistance(ca, cb);
  let expected = 0;
  const ba = decodeIscc(ca).body, bb = decodeIscc(cb).body;
  for (let i = 0; i < 32; i++) for (let v = ba[i] ^ bb[i]; v; v &= v - 1) expected++;
  assert.is(d, expected);
  assert.is(isccDistance(ca, ca), 0);
  assert.is(isccDistance(imageCode(a, 64).iscc, cb), isccDistance(imageCode(a, 64).iscc, imageCode(b, 64).iscc));
  assert.throws(() => isccDistance(ca, textCode('x').iscc), /same type/);
});

test('text: collapse and clean as the reference does', () => {
  assert.is(textCollapse(' Hello,\tWorld!\n'), 'helloworld');
  assert.is(textCollapse('Iñtërnâtiônàlizætiøn☃'), 'internationalizætiøn☃');
  assert.is(textCode('Hello World').characters, 10);
  assert.is(textClean('  a\u0000b\r\n\r\n\r\n  \nc  '), 'ab\n\nc');
  assert.is(textClean('ﬁ'), 'fi'); // NFKC first
});

test('memory stays flat over many calls: image pipeline, Data-, Text-, Image-Code', () => {
  const k = loadKernel('iscc');
  const next = rng(13);
  const px = randomBytes(next, 300 * 200 * 4);
  const bytes = randomBytes(next, 30_000);
  const run = (i: number): void => {
    const w = 300 - (i % 7);
    isccImagePixels(px.subarray(0, w * 200 * 4), w, 200, 4);
    dataCode(bytes.subarray(0, 10_000 + i * 7));
    textCode(`text ${i} `.repeat(50));
    imageCode(new Array(1024).fill(i % 256));
  };
  run(0);
  const before = k.exports.memory.buffer.byteLength;
  for (let i = 0; i < 1500; i++) run(i);
  assert.is(k.exports.memory.buffer.byteLength, before);
});

test('the image pipeline refuses what it cannot take', () => {
  assert.throws(() => isccImagePixels(new Uint8Array(10), 5, 1, 3), /bytes for/);
  assert.throws(() => isccImagePixels(new Uint8Array(8), 4, 1, 2 as 3), /channels/);
  assert.throws(() => isccImagePixels(new Uint8Array(0), 0, 0, 3), /width/);
  assert.throws(() => isccImagePixels([1, 2, 3] as unknown as Uint8Array, 1, 1, 3), /Uint8Array/);
});

test('hostile input gets a clear error, never a crash', () => {
  assert.throws(() => imageCode(new Array(1023).fill(0)), /1024/);
  assert.throws(() => imageCode(new Array(1024).fill(256)), /0-255/);
  assert.throws(() => imageCode(new Array(1024).fill(0), 300), /bits/);
  assert.throws(() => imageCode(new Array(1024).fill(0), 63), /bits/);
  assert.throws(() => audioCode([1.5]), /32-bit/);
  assert.throws(() => audioCode(null as unknown as number[]), isIsccError);
  assert.throws(() => videoCode([]), /no frame/);
  assert.throws(() => videoCode([[1, 2, 3]]), /380/);
  assert.throws(() => videoCode(new Uint8Array(381)), /380/);
  assert.throws(() => videoCode([new Array(380).fill(0)], 32), /bits/);
  assert.throws(() => textCode(42 as unknown as string), isIsccError);
  assert.throws(() => dataCode('abc' as unknown as Uint8Array), isIsccError);
  assert.throws(() => instanceCode(7 as unknown as Uint8Array), isIsccError);
  assert.throws(() => mixedCode([textCode('a').iscc]), /two/);
  assert.throws(() => mixedCode([textCode('a').iscc, dataCode(new Uint8Array(1)).iscc]), /Content-Code/);
  for (const bad of ['', 'ISCC:', 'ISCC:EEAQ', 'ISCC:E!AQAAAAAAAAAAAA', 'FOO:EEAQAAAAAAAAAAAA', 'ISCC:A:B', 'ISCC:EEAQAAAAAAAAAAAAAA', '////', 'ISCC:74AQAAAAAAAAAAAA']) {
    assert.throws(() => decodeIscc(bad), isIsccError, bad);
  }
  assert.throws(() => isccFromBytes(new Uint8Array([0x22, 0x10, 1])), isIsccError);
  assert.throws(() => isccDecompose('ISCC:KACYPXW445FTYNJ3'), isIsccError);
});

test.run();
