// What a media file is, as the bundled ffmpeg reads it: duration, first video and audio
// streams' codecs and the picture size. Used to pick a variant's "other codec" and by the
// tests that check the variant suite makes what it says.
import type { MediaFormat } from '../../lib/detect.js';
import { parseDuration, runFfmpeg } from '../../media/ffmpeg.js';

/** ffmpeg's demuxer for each audio and video format (forced: never guessed from a name). */
export const DEMUXER: Partial<Record<MediaFormat, string>> = {
  mp3: 'mp3', wav: 'wav', flac: 'flac', 'ogg-vorbis': 'ogg', 'ogg-opus': 'ogg',
  mp4: 'mov', mkv: 'matroska', webm: 'matroska', avi: 'avi',
};

export interface MediaProbe {
  /** Seconds, from the container; null when it gives none. */
  duration: number | null;
  videoCodec: string | null;
  audioCodec: string | null;
  width: number | null;
  height: number | null;
  /** Audio sample rate in Hz. */
  sampleRate: number | null;
  /** The audio stream's bit rate in kbit/s, when the container says. */
  audioKbps: number | null;
}

export async function probeMedia(path: string, format: MediaFormat, deadline = Date.now() + 60_000): Promise<MediaProbe> {
  const demuxer = DEMUXER[format];
  if (demuxer === undefined) throw new RangeError(`not an audio or video format: ${format}`);
  // no output is made: ffmpeg prints the input's streams and stops ("-t 0" to a null muxer)
  const { stderr } = await runFfmpeg({ input: path, demuxer, outputArgs: ['-t', '0', '-f', 'null', '-'], deadline });
  const input = stderr.slice(stderr.indexOf('Input #0'), stderr.includes('Output #0') ? stderr.indexOf('Output #0') : undefined);
  const video = /Stream #0:\d+[^\n]*?: Video: (\w+)[^\n]*?, (\d{2,5})x(\d{2,5})/.exec(input);
  const audio = /Stream #0:\d+[^\n]*?: Audio: (\w+)[^\n]*?, (\d+) Hz[^\n]*/.exec(input);
  const kbps = audio === null ? null : /, (\d+) kb\/s/.exec(audio[0]);
  return {
    duration: parseDuration(input),
    videoCodec: video?.[1] ?? null,
    audioCodec: audio?.[1] ?? null,
    width: video ? Number(video[2]) : null,
    height: video ? Number(video[3]) : null,
    sampleRate: audio ? Number(audio[2]) : null,
    audioKbps: kbps ? Number(kbps[1]) : null,
  };
}
