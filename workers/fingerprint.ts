// Piscina task: the perceptual fingerprint of a file's bytes (transferred, not copied).
import { fingerprintFile } from '../src/media/fingerprint.js';
import type { Fingerprint } from '../src/lib/types.js';

export interface FingerprintTask {
  buffer: ArrayBuffer;
}

export default function fingerprint({ buffer }: FingerprintTask): Promise<Fingerprint | null> {
  return fingerprintFile(new Uint8Array(buffer));
}
