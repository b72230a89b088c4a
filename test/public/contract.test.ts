// The OpenAPI contract check (test/helpers/contract.ts) that every HTTP suite runs: it
// fails an answer with a field the document does not describe, a wrong type, or a
// status the operation does not list, and passes the server's real answers.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SERVICE_ERROR_CODES } from 'provenant/api';
import { ERRORS } from '../../server/src/errors.js';
import { contractError, contractProblem } from '../helpers/contract.js';
import { apiRequest, startTestServer, testEngine, type TestServer } from '../helpers/server.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const quota = { allowed: true, scope: 'org', tier: 'starter', used: 3, limit: 2500, resets_at: '2026-12-01T00:00:00.000Z', overage_signs: 0, overage_cents_per_100: 100 };
let srv: TestServer;

test.before(async () => {
  srv = await startTestServer({}, { engine: testEngine(import.meta.url) });
});
test.after(async () => {
  await srv.close();
});

test('an answer as the document describes it passes; the query string and a trailing slash do not matter', () => {
  assert.is(contractProblem('GET', '/api/v1/sign-it/quota', 200, JSON_TYPE, JSON.stringify(quota)), null);
  assert.is(contractProblem('GET', '/api/v1/sign-it/quota/by-agent/?agent_pub_key=x', 200, JSON_TYPE, JSON.stringify(quota)), null);
});

test('a field the document does not describe fails, naming it', () => {
  const problem = contractProblem('GET', '/api/v1/sign-it/quota', 200, JSON_TYPE, JSON.stringify({ ...quota, surprise: 1 }));
  assert.ok(problem?.includes('(surprise)'), String(problem));
});

test('spec 2.5: overage_cents_per_100 is a number, so null fails', () => {
  const problem = contractProblem('GET', '/api/v1/sign-it/quota', 200, JSON_TYPE, JSON.stringify({ ...quota, tier: 'enterprise', overage_cents_per_100: null }));
  assert.ok(problem?.includes('/overage_cents_per_100 must be number'), String(problem));
});

test('a success status the operation does not list is checked as an error body, and fails', () => {
  const problem = contractProblem('GET', '/api/v1/sign-it/quota', 201, JSON_TYPE, JSON.stringify(quota));
  assert.ok(problem?.includes("must have required property 'error'"), String(problem));
});

test('error bodies: {error, message, ...} from the error table; an unknown code fails', () => {
  assert.is(contractProblem('GET', '/api/v1/sign-it/verify', 400, JSON_TYPE, JSON.stringify({ error: 'invalid_hash', message: 'x', field: 'hash' })), null);
  assert.ok(contractProblem('GET', '/api/v1/sign-it/verify', 400, JSON_TYPE, JSON.stringify({ error: 'no_such_code', message: 'x' })) !== null);
  assert.is(contractProblem('POST', '/oauth/token', 429, JSON_TYPE, JSON.stringify({ error: 'rate_limited', error_description: 'x', retry_after: 3 })), null);
});

test('pages, SVG and empty bodies are not checked', () => {
  assert.is(contractProblem('GET', '/c/x', 200, 'text/html; charset=utf-8', '<!doctype html>'), null);
  assert.is(contractProblem('POST', '/oauth/revoke', 200, JSON_TYPE, ''), null);
});

test('the watched test server: real answers pass, and close() would throw the problems seen', async () => {
  const { token } = await srv.register();
  const me = await apiRequest(srv.url, 'GET', '/api/v1/auth/me', { token });
  assert.is(me.status, 200);
  assert.is(contractProblem('GET', '/api/v1/auth/me', 200, JSON_TYPE, me.text), null);
  assert.ok(contractProblem('GET', '/api/v1/auth/me', 200, JSON_TYPE, JSON.stringify({ user: { ...me.body.user, password_hash: 'x' } }))?.includes('(password_hash)'));
  assert.is(contractError([]), null);
  assert.match(contractError(['GET /x 200: a', 'GET /x 200: a'])!.message, /1 answer\(s\)/);
});

test("the SDK's error codes are the server's error table, both ways", () => {
  assert.equal([...SERVICE_ERROR_CODES].sort(), Object.keys(ERRORS).sort());
});

test.run();
