// The audio formats the decoders read (detect.ts names them). A leaf: audio.ts, its
// stream checks (audio-params.ts) and its ffmpeg path (ffmpeg-audio.ts) all take it
// from here, so the two helpers do not import audio.ts, which imports them.
export type AudioFormat = 'mp3' | 'wav' | 'flac' | 'ogg-vorbis' | 'ogg-opus';
