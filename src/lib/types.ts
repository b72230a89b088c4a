// Shapes shared by the library, the media decoders, the workers and the server.

export type HashType = 'ImagePHash' | 'AudioChromaprint' | 'VideoPHash';

/** A perceptual fingerprint as stored and as sent over the API (spec 2.1 perceptual_hash). */
export interface Fingerprint {
  hash_type: HashType;
  /** The hash bytes: 8 for images, 4 per frame word for audio, 8 per frame for video. */
  hash_value: number[];
  /** LSH bands: 8 bands of 1 byte (images) or of 4 bytes (audio, video). */
  bands: number[][];
}
