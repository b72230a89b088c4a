// The shape shared by the library commands that read one file
// (`provenant fingerprint|integrity|sha256 FILE [--json]`): argument checks, then JSON
// or readable output; a missing or unreadable path, or a file that cannot be decoded,
// is one line on stderr naming it, and exit code 1. What a file says of itself (a C2PA
// claim generator, ingredient titles) is others' text: every line goes through visible().
import { parseArgs } from 'node:util';
import { terminalJson, visible, visibleLines } from '../lib/terminal-text.js';
import { readFailure } from '../media/errors.js';
import type { Command } from './command.js';
import { USAGE_ERROR } from './usage.js';

const OPTIONS = { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } as const;

/** `readable`: the answer as lines (a newline inside a line is others' text, printed escaped). */
export function fileCommand<T>(name: string, compute: (file: string) => Promise<T>, readable: (value: T) => string[]): Command {
  const usage = `usage: provenant ${name} FILE [--json]\n`;
  const usageError = (message: string): number => {
    process.stderr.write(`${visible(`provenant ${name}: ${message}`)}\n${usage}`);
    return USAGE_ERROR;
  };
  return async (args) => {
    let parsed;
    try {
      parsed = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
    } catch (err) {
      return usageError((err as Error).message); // names the unknown option
    }
    const { values, positionals } = parsed;
    if (values.help) {
      process.stdout.write(usage);
      return 0;
    }
    if (positionals.length !== 1) return usageError(`expected one FILE, got ${positionals.length}`);
    if (positionals[0] === '-') return usageError('FILE must be a path (standard input is not read)');
    const json = values.json === true;
    const file = positionals[0];
    let value: T;
    try {
      value = await compute(file);
    } catch (e) {
      // a system call's error (ENOENT, EISDIR, EACCES) is said the same way for every command
      const fromFileSystem = typeof (e as NodeJS.ErrnoException).syscall === 'string';
      process.stderr.write(`${visible(`provenant ${name}: ${(fromFileSystem ? readFailure(file, e) : (e as Error)).message}`)}\n`);
      return 1;
    }
    process.stdout.write(`${json ? terminalJson(value) : visibleLines(readable(value))}\n`);
    return 0;
  };
}
