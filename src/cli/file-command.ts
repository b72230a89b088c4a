// The shape shared by the library commands that read one file
// (`provenant fingerprint|integrity|sha256 FILE [--json]`): argument checks, a clear
// error for a missing file, then JSON or readable output.
import { stat } from 'node:fs/promises';
import type { Command } from './main.js';

export function fileCommand<T>(name: string, compute: (file: string) => Promise<T>, readable: (value: T) => string): Command {
  const usage = `usage: provenant ${name} FILE [--json]`;
  return async (args) => {
    const json = args.includes('--json');
    const rest = args.filter((a) => a !== '--json');
    if (rest.length !== 1 || rest[0].startsWith('-')) {
      process.stderr.write(`${usage}\n`);
      return 1;
    }
    const file = rest[0];
    try {
      if (!(await stat(file)).isFile()) throw new Error('not a file');
    } catch {
      process.stderr.write(`provenant ${name}: cannot read ${file}: no such file\n`);
      return 1;
    }
    const value = await compute(file);
    process.stdout.write(`${json ? JSON.stringify(value) : readable(value)}\n`);
    return 0;
  };
}
