// Piscina task for `provenant bench`: a file's bytes decoded only, as the fingerprint
// task decodes them, without hashing: the floor its speed is measured against. Images to
// full-size pixels (sharp, as decodeImagePixels), audio to 11025 Hz mono (WAV parsed
// here, the rest by ffmpeg to a null output), video through ffmpeg's decode of the first
// stream (the same first 120 s, to a null output). Answers how many units came out (pixels, samples, bytes of log) so the work
// cannot be skipped.
import { detectType } from '../src/lib/detect.js';
import { decodeAudio, type AudioFormat } from '../src/media/audio.js';
import { runFfmpeg } from '../src/media/ffmpeg.js';
import { decodeImagePixels } from '../src/media/image.js';
import { MAX_VIDEO_FRAMES } from '../src/media/video.js';

export interface BenchDecodeTask {
  buffer: ArrayBuffer;
  deadline?: number;
}

const DEMUXER: Record<string, string> = { mp4: 'mov', mkv: 'matroska', webm: 'matroska', avi: 'avi' };
const AUDIO_DEMUXER: Record<AudioFormat, string> = { mp3: 'mp3', wav: 'wav', flac: 'flac', 'ogg-vorbis': 'ogg', 'ogg-opus': 'ogg' };

export default async function benchDecode({ buffer, deadline }: BenchDecodeTask): Promise<number> {
  const bytes = new Uint8Array(buffer);
  const type = detectType(bytes);
  if (type === null) throw new Error('not a supported media file');
  if (type.kind === 'image') return (await decodeImagePixels(bytes, type.format)).data.length;
  // WAV is parsed in process, as the fingerprint parses it; the other formats as the
  // fingerprint streams them: ffmpeg to 11025 Hz mono over the first 120 s, here to nothing
  if (type.format === 'wav') return (await decodeAudio(bytes, 'wav', { deadline })).length;
  const audio = type.kind === 'audio';
  const { stderr } = await runFfmpeg({
    input: bytes,
    pipeInput: audio,
    demuxer: audio ? AUDIO_DEMUXER[type.format as AudioFormat] : DEMUXER[type.format],
    inputArgs: ['-t', String(audio ? 120 : MAX_VIDEO_FRAMES)],
    outputArgs: audio ? ['-map', '0:a:0', '-vn', '-ac', '1', '-ar', '11025', '-f', 'null', '-'] : ['-map', '0:v:0', '-an', '-f', 'null', '-'],
    deadline,
  });
  return stderr.length;
}
