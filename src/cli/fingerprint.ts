// `provenant fingerprint FILE [--json]`: the file's perceptual fingerprint, as JSON
// ({hash_type, hash_value, bands} or null) or as readable lines.
import { stat } from 'node:fs/promises';
import { fingerprintFile } from '../media/fingerprint.js';
import type { Fingerprint } from '../lib/types.js';

const USAGE = 'usage: provenant fingerprint FILE [--json]';

const hex = (bytes: number[]) => bytes.map((b) => b.toString(16).padStart(2, '0')).join('');

function readable(fp: Fingerprint | null): string {
  if (fp === null) return 'null (not a supported image, audio or video file, or unreadable)';
  const unit = fp.hash_type === 'ImagePHash' ? 8 : fp.hash_type === 'VideoPHash' ? 8 : 4;
  const what = fp.hash_type === 'ImagePHash' ? '' : ` (${fp.hash_value.length / unit} ${fp.hash_type === 'VideoPHash' ? 'frames' : 'words'})`;
  return [
    `hash_type:  ${fp.hash_type}${what}`,
    `hash_value: ${hex(fp.hash_value)}`,
    `bands:      ${fp.bands.map(hex).join(' ')}`,
  ].join('\n');
}

export async function run(args: string[]): Promise<number> {
  const json = args.includes('--json');
  const rest = args.filter((a) => a !== '--json');
  if (rest.length !== 1 || rest[0].startsWith('-')) {
    process.stderr.write(`${USAGE}\n`);
    return 1;
  }
  const file = rest[0];
  try {
    if (!(await stat(file)).isFile()) throw new Error('not a file');
  } catch {
    process.stderr.write(`provenant fingerprint: cannot read ${file}: no such file\n`);
    return 1;
  }
  const fp = await fingerprintFile(file);
  process.stdout.write(`${json ? JSON.stringify(fp) : readable(fp)}\n`);
  return 0;
}
