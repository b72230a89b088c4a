// The 11025 Hz resampler (src/lib/resample.ts + assembly/chromaprint/resampler.ts):
// sines keep their frequency, phase and amplitude, DC gain is 1, content above the
// cutoff (0.8 of 5512.5 Hz) is removed, across kernel chunk boundaries and for a rate
// that takes the interpolating TypeScript path.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { resampleTo11025, mixToMono } from '../../src/lib/resample.js';
import { loadKernel } from '../../src/lib/wasm.js';

const OUT = 11025;

function sine(rate: number, freq: number, seconds: number, amp = 0.5): Float32Array {
  const n = Math.round(rate * seconds);
  const x = new Float32Array(n);
  for (let i = 0; i < n; i++) x[i] = amp * Math.sin((2 * Math.PI * freq * i) / rate);
  return x;
}

function maxError(y: Float32Array, f: (n: number) => number, from: number, to: number): number {
  let e = 0;
  for (let n = from; n < to; n++) e = Math.max(e, Math.abs(y[n] - f(n)));
  return e;
}

for (const rate of [8000, 16000, 22050, 32000, 44100, 48000, 96000, 44056]) {
  test(`${rate} Hz -> 11025 Hz: a 440 Hz sine keeps frequency, phase and amplitude`, () => {
    const seconds = 7; // > 65536 output samples: crosses a kernel chunk boundary
    const y = resampleTo11025(sine(rate, 440, seconds), rate);
    assert.is(y.length, Math.floor((Math.round(rate * seconds) * OUT) / rate));
    const err = maxError(y, (n) => 0.5 * Math.sin((2 * Math.PI * 440 * n) / OUT), 200, y.length - 200);
    assert.ok(err < 0.01, `max error ${err}`);
  });
}

test('DC gain is 1 and content above the cutoff is removed', () => {
  const dc = resampleTo11025(new Float32Array(44100 * 2).fill(0.25), 44100);
  assert.ok(maxError(dc, () => 0.25, 200, dc.length - 200) < 1e-3);
  const high = resampleTo11025(sine(44100, 6000, 2), 44100); // above the 5512.5 Hz Nyquist
  let peak = 0;
  for (let n = 200; n < high.length - 200; n++) peak = Math.max(peak, Math.abs(high[n]));
  assert.ok(peak < 0.5 * 0.01, `6 kHz leaks at ${peak}`);
});

test('maxOut limits the output; 11025 Hz input passes through', () => {
  assert.is(resampleTo11025(sine(44100, 440, 3), 44100, 1000).length, 1000);
  const same = sine(OUT, 440, 1);
  assert.is(resampleTo11025(same, OUT), same);
});

test('mixToMono averages the channels', () => {
  const a = Float32Array.from([1, 0.5, -1]);
  const b = Float32Array.from([0, 0.5, 1]);
  const c = Float32Array.from([0.5, 0.5, 0.5, 9]);
  assert.equal(Array.from(mixToMono([a, b])), [0.5, 0.5, 0]);
  assert.equal(Array.from(mixToMono([a, b, c])), [0.5, 0.5, 0.5 / 3].map((v) => Math.fround(v)));
  assert.equal(Array.from(mixToMono([a, b], 2)), [0.5, 0.5]);
});

test('kernel memory stays flat over a million calls', () => {
  const kernel = loadKernel('chromaprint');
  resampleTo11025(sine(44100, 440, 7), 44100); // the largest chunk first
  const before = kernel.exports.memory.buffer.byteLength;
  const tiny = sine(48000, 440, 0.01);
  for (let i = 0; i < 1_000_000; i++) resampleTo11025(tiny, i % 2 ? 48000 : 44100);
  resampleTo11025(sine(44100, 440, 7), 44100);
  assert.is(kernel.exports.memory.buffer.byteLength, before);
});

test.run();
