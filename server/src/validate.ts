// Request validation with zod, before any work: a failure is 400 invalid_request with
// a message naming the field (decisions.md 11).
import type { z } from 'zod';
import { ApiError } from './errors.js';
import { zodMessage } from './middleware.js';

/**
 * Text a store keeps must hold no NUL character: PostgreSQL's text type cannot (SQLite's
 * can), so such a field is refused here, naming it, on either engine alike.
 */
export const withoutNul = (text: string): boolean => !text.includes('\u0000');
export const WITHOUT_NUL = 'must not contain NUL characters';

export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input ?? {});
  if (!result.success) throw new ApiError('invalid_request', zodMessage(result.error));
  return result.data;
}
