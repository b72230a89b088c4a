// What every command does with a wrong command line: a message naming what was wrong,
// then its usage, on stderr, and exit code USAGE_ERROR (2, the usual convention, apart
// from 1 for a command that ran and failed).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { visible } from '../lib/terminal-text.js';

export const USAGE_ERROR = 2;

/** Thrown for a command line that cannot run: a missing, unknown or malformed flag or argument. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * The command line of `provenant <command>` parsed strictly (the flags of `options`,
 * positionals allowed). A number is the exit code to return at once: USAGE_ERROR after
 * the parser's message (unknown or malformed flag) and `usage` on stderr, or 0 after
 * `usage` on stdout for --help.
 */
export function commandLine<O extends NonNullable<ParseArgsConfig['options']>>(
  command: string,
  usage: string,
  args: string[],
  options: O,
): ReturnType<typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>> | number {
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    process.stderr.write(`${visible(`provenant ${command}: ${(err as Error).message}`)}\n${usage}`);
    return USAGE_ERROR;
  }
  if ((parsed.values as Record<string, unknown>).help) {
    process.stdout.write(usage);
    return 0;
  }
  return parsed;
}
