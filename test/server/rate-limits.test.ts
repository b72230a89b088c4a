// RATE_LIMITS is the one table of the server's limits: docs/server.md lists every row in
// the same words GET /openapi.json uses, and each limited operation's description says it.
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { describeLimit, HOUR, MINUTE, RATE_LIMITS, rateLimitOf, type RateLimitName } from '../../server/src/rate-limits.js';
import { openApiDocument } from '../../server/src/public/openapi.js';

const names = Object.keys(RATE_LIMITS) as RateLimitName[];

test('docs/server.md lists every limit as the table states it, and no other', () => {
  const doc = readFileSync(new URL('../../docs/server.md', import.meta.url), 'utf8');
  for (const name of names) assert.ok(doc.includes(`| \`${name}\` | ${describeLimit(name)} |`), `docs/server.md: ${name} ${describeLimit(name)}`);
  const listed = [...doc.matchAll(/^\| `([a-z0-9:-]+)` \| [^|]+ \|$/gm)].map((m) => m[1]);
  assert.equal(listed.sort(), [...names].sort());
});

test('spec 8 in words, and as rateLimit() takes it', () => {
  assert.is(describeLimit('sign-it:verify'), '30/min per IP');
  assert.is(describeLimit('sign-it:contact'), '3/hour per IP');
  assert.is(describeLimit('oauth:userinfo'), '500/min per access token');
  assert.equal(rateLimitOf('sign-it:badge'), { name: 'sign-it:badge', max: 60, durationMs: MINUTE });
  assert.equal(rateLimitOf('auth:email-verification'), { name: 'auth:email-verification', max: 3, durationMs: HOUR });
});

test('GET /openapi.json states the limit of a limited operation from the table', () => {
  const paths = openApiDocument('http://127.0.0.1').paths as Record<string, Record<string, { description?: string }>>;
  assert.match(paths['/api/v1/sign-it/verify'].get.description ?? '', `Rate limit: ${describeLimit('sign-it:verify')}`);
  assert.match(paths['/api/v1/auth/login'].post.description ?? '', `${describeLimit('auth:password:address')} and ${describeLimit('auth:password:account')}`);
  assert.match(paths['/oauth/token'].post.description ?? '', describeLimit('oauth:token'));
});

test.run();
