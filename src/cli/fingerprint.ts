// `provenant fingerprint FILE [--json]`: the file's perceptual fingerprint, as JSON
// ({hash_type, hash_value, bands} or null) or as readable lines; a file that cannot be
// read or decoded exits 1 with the reason (file-command.ts).
// `provenant fingerprint --pdq FILE [--json]`: its PDQ instead, in the exchange text of
// Meta's tools (`hash,quality`; for a video one `frame,quality,hash,timestamp` line per
// sampled frame), or as the record's pdq_hash JSON (docs/pdq.md).
import { fingerprintFile } from '../media/fingerprint.js';
import { perceptualHashes } from '../media/examine.js';
import type { Fingerprint } from '../lib/types.js';
import { pdqExchangeLines, type PdqFingerprint, type VpdqFingerprint } from '../lib/pdq.js';
import { fileCommand } from './file-command.js';
import type { Command } from './command.js';

const hex = (bytes: number[]) => bytes.map((b) => b.toString(16).padStart(2, '0')).join('');

function readable(fp: Fingerprint | null): string[] {
  if (fp === null) return ['null (not a supported image, audio or video file, or audio under about 3 s)'];
  const unit = fp.hash_type === 'ImagePHash' ? 8 : fp.hash_type === 'VideoPHash' ? 8 : 4;
  const what = fp.hash_type === 'ImagePHash' ? '' : ` (${fp.hash_value.length / unit} ${fp.hash_type === 'VideoPHash' ? 'frames' : 'words'})`;
  return [
    `hash_type:  ${fp.hash_type}${what}`,
    `hash_value: ${hex(fp.hash_value)}`,
    `bands:      ${fp.bands.map(hex).join(' ')}`,
  ];
}

function exchangeText(fp: PdqFingerprint | VpdqFingerprint | null): string[] {
  if (fp === null) return ['null (PDQ is for images and video: not a supported image or video file)'];
  return pdqExchangeLines(fp);
}

const fingerprint = fileCommand('fingerprint', (file) => fingerprintFile(file), readable);
const pdq = fileCommand('fingerprint --pdq', async (file) => (await perceptualHashes(file)).pdq_hash, exchangeText);

const USAGE = `usage: provenant fingerprint FILE [--json]         the perceptual fingerprint
       provenant fingerprint --pdq FILE [--json]   its PDQ: hash,quality (a video: frame,quality,hash,timestamp lines)
`;

export const run: Command = async (args) => {
  if (args.includes('--pdq')) return pdq(args.filter((a) => a !== '--pdq'));
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  return fingerprint(args);
};
