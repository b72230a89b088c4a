// A 16-bit PCM WAV file from float samples in [-1, 1]: the sample's tracks before encoding.
import { writeFile } from 'node:fs/promises';

export async function writeWav(path: string, samples: Float32Array, rate: number): Promise<void> {
  const bytes = Buffer.alloc(44 + samples.length * 2);
  bytes.write('RIFF', 0, 'ascii');
  bytes.writeUInt32LE(36 + samples.length * 2, 4);
  bytes.write('WAVEfmt ', 8, 'ascii');
  bytes.writeUInt32LE(16, 16);
  bytes.writeUInt16LE(1, 20); // PCM
  bytes.writeUInt16LE(1, 22); // mono
  bytes.writeUInt32LE(rate, 24);
  bytes.writeUInt32LE(rate * 2, 28);
  bytes.writeUInt16LE(2, 32);
  bytes.writeUInt16LE(16, 34);
  bytes.write('data', 36, 'ascii');
  bytes.writeUInt32LE(samples.length * 2, 40);
  for (let i = 0; i < samples.length; i++) bytes.writeInt16LE(Math.round(32767 * Math.max(-1, Math.min(1, samples[i]))), 44 + 2 * i);
  await writeFile(path, bytes, { mode: 0o600 });
}
