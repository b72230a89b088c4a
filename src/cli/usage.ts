// What every command does with a wrong command line: a message naming what was wrong,
// then its usage, on stderr, and exit code USAGE_ERROR (2, the usual convention, apart
// from 1 for a command that ran and failed).
export const USAGE_ERROR = 2;

/** Thrown for a command line that cannot run: a missing, unknown or malformed flag or argument. */
export class UsageError extends Error {
  override name = 'UsageError';
}
