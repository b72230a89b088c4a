// Decoder limits (issue 25 item 14): audio whose headers declare absurd stream
// parameters (a 536,915,012 Hz Ogg Vorbis file took ffmpeg to 1 GB and the WebAssembly
// decoder to 2 GB) is refused before any decoder runs, as decode_failed, by ffmpeg and
// by the JavaScript decoders alike; and every ffmpeg process runs under the decoders'
// memory limit (RLIMIT_DATA), which holds when a decoder tries to pass it. ffmpeg is run
// here through a wrapper (FFMPEG_PATH) that records each run's data limit and, with
// /usr/bin/time, its peak resident memory.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fingerprintFile } from '../../src/media/fingerprint.js';
import { decodeAudio, type AudioFormat } from '../../src/media/audio.js';
import { AUDIO_STREAM_LIMITS } from '../../src/media/audio-params.js';
import { ffmpegPath, FfmpegError, refusedStream, runFfmpeg } from '../../src/media/ffmpeg.js';
import { DECODER_DEFAULT_MEMORY_MB } from '../../src/media/memory-limit.js';
import { FingerprintError } from '../../src/media/errors.js';
import { chainedVorbis, hostileFlac, hostileOpus, hostileVorbis, hostileWav } from '../helpers/hostile-audio.js';

const test = suite('media/decoder-limits');
const TIME = '/usr/bin/time';
let dir: string;
let log: string;
let realFfmpeg: string;
let savedPath: string | undefined;

const audio = (name: string) => new Uint8Array(readFileSync(new URL(`../fixtures/audio/${name}`, import.meta.url)));
const media = (name: string) => new Uint8Array(readFileSync(new URL(`../fixtures/media/${name}`, import.meta.url)));

test.before(() => {
  realFfmpeg = ffmpegPath();
  savedPath = process.env.FFMPEG_PATH;
  dir = mkdtempSync(join(tmpdir(), 'provenant-decoder-limits-'));
  log = join(dir, 'runs.log');
  // per run: "limit <soft RLIMIT_DATA in bytes, or unlimited>", then "peak_kb <max RSS>" once
  // it exits (none when it was killed: a video run is stopped once it has its frames)
  const measure = existsSync(TIME) ? `exec ${TIME} -f 'peak_kb %M' -a -o '${log}' '${realFfmpeg}' "$@"` : `echo 'peak_kb -1' >> '${log}'; exec '${realFfmpeg}' "$@"`;
  const wrapper = join(dir, 'ffmpeg');
  writeFileSync(wrapper, `#!/bin/sh\nprintf 'limit %s\\n' "$(grep '^Max data size' /proc/self/limits | awk '{print $4}')" >> '${log}'\n${measure}\n`);
  chmodSync(wrapper, 0o755);
  process.env.FFMPEG_PATH = wrapper;
});

test.after(() => {
  if (savedPath === undefined) delete process.env.FFMPEG_PATH;
  else process.env.FFMPEG_PATH = savedPath;
  rmSync(dir, { recursive: true, force: true });
});

interface Run { limit: number | null; peakMb: number | null }

/** The runs recorded since the log was last read (and empties it). */
function runs(): Run[] {
  if (!existsSync(log)) return [];
  const text = readFileSync(log, 'utf8');
  rmSync(log);
  const out: Run[] = [];
  for (const line of text.split('\n')) {
    const [key, value] = line.split(' ');
    if (key === 'limit') out.push({ limit: value === 'unlimited' ? null : Number(value), peakMb: null });
    else if (key === 'peak_kb' && out.length > 0 && Number(value) >= 0) out[out.length - 1].peakMb = Number(value) / 1024;
  }
  return out;
}

async function refused(pending: Promise<unknown>, name: string, says: RegExp): Promise<void> {
  try {
    await pending;
    assert.unreachable(`${name}: should be refused`);
  } catch (e) {
    assert.instance(e, FingerprintError, `${name}: ${e}`);
    assert.is((e as FingerprintError).code, 'decode_failed', name);
    assert.match((e as Error).message, /refused before decoding/, name);
    assert.match((e as Error).message, says, name);
  }
}

const HOSTILE: [string, AudioFormat, () => Uint8Array, RegExp][] = [
  ['Vorbis at 536,915,012 Hz', 'ogg-vorbis', () => hostileVorbis({ rate: 536_915_012 }), /sample rate of 536915012 Hz/],
  ['Vorbis at 1e9 Hz', 'ogg-vorbis', () => hostileVorbis({ rate: 1_000_000_000 }), /sample rate of 1000000000 Hz/],
  ['Vorbis at 0 Hz', 'ogg-vorbis', () => hostileVorbis({ rate: 0 }), /sample rate of 0 Hz/],
  ['Vorbis with 255 channels', 'ogg-vorbis', () => hostileVorbis({ channels: 255 }), /255 channels/],
  ['a chained Ogg whose second stream is at 536,915,012 Hz', 'ogg-vorbis', () => chainedVorbis(536_915_012), /stream 2 declares a sample rate of 536915012 Hz/],
  ['Opus with 255 channels', 'ogg-opus', () => hostileOpus(255), /255 channels/],
  ['FLAC at 1,048,575 Hz', 'flac', () => hostileFlac({ rate: 1_048_575 }), /sample rate of 1048575 Hz/],
  ['FLAC declaring 2^36 - 1 samples (18 days)', 'flac', () => hostileFlac({ totalSamples: 2 ** 36 - 1 }), /duration of \d+ s/],
  ['WAV at 536,915,012 Hz', 'wav', () => hostileWav({ rate: 536_915_012, channels: 1 }), /sample rate of 536915012 Hz/],
  ['WAV with 65,535 channels', 'wav', () => hostileWav({ rate: 8000, channels: 65_535 }), /65535 channels/],
];

test('absurd stream parameters are refused before decoding (decode_failed), from bytes and from a path; ffmpeg is never started', async () => {
  runs();
  for (const [name, format, make, says] of HOSTILE) {
    const bytes = make();
    await refused(fingerprintFile(bytes), name, says);
    const path = join(dir, `hostile-${format}`);
    writeFileSync(path, bytes);
    await refused(fingerprintFile(path), `${name} (path)`, says);
  }
  assert.equal(runs(), [], 'no ffmpeg process was started for any of them');
});

test('the JavaScript decoders (WebAssembly Vorbis, FLAC; our WAV reader) refuse them too, and ffmpeg when forced', async () => {
  for (const [name, format, make, says] of HOSTILE) {
    const bytes = make();
    for (const decoder of format === 'ogg-opus' ? ['ffmpeg' as const] : ['js' as const, 'ffmpeg' as const]) {
      try {
        await decodeAudio(bytes, format, { decoder });
        assert.unreachable(`${name} (${decoder}): should be refused`);
      } catch (e) {
        assert.match((e as Error).message, /refused before decoding/, `${name} (${decoder}): ${e}`);
        assert.match((e as Error).message, says, `${name} (${decoder})`);
      }
    }
  }
  assert.equal(runs(), [], 'no ffmpeg process was started');
});

test('the limits are the stated ones; a stream at the edge of them is decoded', async () => {
  assert.equal(AUDIO_STREAM_LIMITS, { minSampleRate: 1000, maxSampleRate: 768_000, maxChannels: 64, maxFrameSamples: 65_535, maxDeclaredSeconds: 604_800 });
  // 768 kHz and 64 channels are accepted (then decoded as the header says)
  const edge = hostileWav({ rate: 768_000, channels: 64 });
  assert.ok((await decodeAudio(edge, 'wav', { decoder: 'js' })).length > 0);
  await refused(fingerprintFile(hostileWav({ rate: 768_001, channels: 1 })), '768001 Hz', /768001 Hz/);
  await refused(fingerprintFile(hostileWav({ rate: 8000, channels: 65 })), '65 channels', /65 channels/);
});

test("ffmpeg's own probe output is checked too: an input stream outside the limits stops it before it decodes", () => {
  const dump = (stream: string) => `Input #0, ogg, from 'file:x':\n  Duration: 00:00:18.00\n    ${stream}\nStream mapping:\n`;
  assert.match(refusedStream(dump('Stream #0:0: Audio: vorbis, 536915012 Hz, stereo, fltp, 112 kb/s'))!, /sample rate of 536915012 Hz/);
  assert.match(refusedStream(dump('Stream #0:1(und): Audio: pcm_s16le, 44100 Hz, 255 channels, s16, 1411 kb/s'))!, /255 channels/);
  assert.is(refusedStream(dump('Stream #0:0: Audio: vorbis, 44100 Hz, stereo, fltp, 112 kb/s')), null);
  // 0 is what ffmpeg prints for what its probe did not find (garbage): left to the decoder to fail on
  assert.is(refusedStream(dump('Stream #0:0: Audio: flac, 0 channels')), null);
  const video = dump('Stream #0:0(und): Video: h264 (High) (avc1 / 0x31637661), yuv420p, 20000x20000 [SAR 1:1 DAR 1:1], 25 fps');
  assert.match(refusedStream(video, 40_000_000)!, /20000x20000/);
  assert.is(refusedStream(video.replace('20000x20000', '1920x1080'), 40_000_000), null);
});

test('a video whose audio stream declares 536,915,012 Hz: ffmpeg is stopped once it prints that stream, decode_failed', async () => {
  // cockatoo.mp4's video and the hostile WAV's samples, copied (not resampled) into Matroska
  const wav = join(dir, 'hostile.wav');
  const mkv = join(dir, 'hostile.mkv');
  writeFileSync(wav, hostileWav({ rate: 536_915_012, channels: 1 }));
  const mux = spawnSync(realFfmpeg, ['-nostdin', '-v', 'error', '-y', '-i', new URL('../fixtures/media/cockatoo.mp4', import.meta.url).pathname, '-i', wav, '-map', '0:v', '-map', '1:a', '-c', 'copy', mkv]);
  assert.is(mux.status, 0, String(mux.stderr));
  try {
    await fingerprintFile(new Uint8Array(readFileSync(mkv)));
    assert.unreachable('should be refused');
  } catch (e) {
    assert.instance(e, FingerprintError);
    assert.is((e as FingerprintError).code, 'decode_failed');
    assert.match((e as Error).message, /refused before decoding: an input stream declares a sample rate of 536915012 Hz/);
  }
  runs();
});

test('every ffmpeg run is under the memory limit: the default, the one given, the sandbox\'s; fingerprints are unchanged by it', async () => {
  runs();
  const files: [string, Uint8Array][] = [
    ['vorbis', audio('drascula-track2-18s.ogg')], ['opus', audio('drascula-track1-20s.opus')], ['mp3', audio('frontiers-25s.mp3')],
    ['flac', audio('time-to-strike-8s.flac')], ['mp4', media('cockatoo.mp4')], ['webm', media('cockatoo-vp8.webm')],
  ];
  for (const [name, bytes] of files) {
    const unlimited = await fingerprintFile(bytes, { decoderMemoryMb: null });
    const none = runs();
    assert.ok(none.length > 0 && none.every((r) => r.limit === null), `${name}: null is no limit: ${JSON.stringify(none)}`);
    assert.equal(await fingerprintFile(bytes), unlimited, `${name}: the default limit`);
    const byDefault = runs();
    assert.ok(byDefault.length > 0 && byDefault.every((r) => r.limit === DECODER_DEFAULT_MEMORY_MB * 1024 * 1024), `${name}: ${JSON.stringify(byDefault)}`);
    assert.equal(await fingerprintFile(bytes, { decoderMemoryMb: 160 }), unlimited, `${name}: 160 MB`);
    const small = runs();
    assert.ok(small.length > 0 && small.every((r) => r.limit === 160 * 1024 * 1024), `${name}: ${JSON.stringify(small)}`);
  }
});

test('the limit holds: a decoder that tries to pass it fails that run, its peak memory stays under the limit', async () => {
  // The 536,915,012 Hz Vorbis file straight to ffmpeg, with its probe output off (so
  // nothing here refuses it first): without a limit its resampler grows to about 1 GB.
  const run = (memoryLimitMb: number) => runFfmpeg({
    input: hostileVorbis({ rate: 536_915_012 }),
    pipeInput: true,
    demuxer: 'ogg',
    inputArgs: ['-loglevel', 'error'],
    outputArgs: ['-af', 'aresample=11025:resampler=swr:filter_size=16:phase_shift=8:linear_interp=1:cutoff=0.8', '-ac', '1', '-t', '120', '-f', 's16le', 'pipe:1'],
    memoryLimitMb,
  });
  runs();
  for (const mb of [128, 256]) {
    try {
      await run(mb);
      assert.unreachable(`${mb} MB: should fail`);
    } catch (e) {
      assert.instance(e, FfmpegError);
      assert.is((e as FfmpegError).code, 'failed', String(e));
    }
    const [r] = runs();
    assert.is(r.limit, mb * 1024 * 1024);
    if (r.peakMb !== null) assert.ok(r.peakMb < mb, `peak ${r.peakMb.toFixed(1)} MB under the ${mb} MB limit`);
    else if (process.env.CI === 'true') assert.unreachable(`${TIME} is needed to measure peak memory`);
  }
});

test.run();
