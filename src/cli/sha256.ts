// `provenant sha256 FILE [--json]`: the file's SHA-256, the hash `GET /verify` looks up,
// streamed through the service's hasher (decisions.md 10).
import { createReadStream } from 'node:fs';
import { createFileHasher } from '../lib/digest.js';
import { fileCommand } from './file-command.js';

async function sha256OfFile(file: string): Promise<{ file: string; sha256: string }> {
  const hasher = createFileHasher();
  for await (const chunk of createReadStream(file)) hasher.update(chunk as Buffer);
  return { file, sha256: hasher.digestHex() };
}

export const run = fileCommand('sha256', sha256OfFile, (r) => [`${r.sha256}  ${r.file}`]);
