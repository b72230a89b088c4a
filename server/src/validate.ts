// Request validation with zod, before any work: a failure is 400 invalid_request with
// a message naming the field (decisions.md 11).
import type { z } from 'zod';
import { ApiError } from './errors.js';
import { zodMessage } from './middleware.js';

export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input ?? {});
  if (!result.success) throw new ApiError('invalid_request', zodMessage(result.error));
  return result.data;
}
