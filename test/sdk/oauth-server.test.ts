// The SDK's OAuth 2.0 + PKCE helpers against the real authorization server (issue 17),
// where test/sdk/oauth.test.ts has only a loopback stand-in: the SDK builds the
// authorization URL, the user's browser (test/oauth/support.ts's stand-in) signs in and
// consents, the SDK reads the redirect (state, iss), exchanges the code, reads
// userinfo, calls the sign-it endpoints with the access token (a verify-scoped call
// answered, a sign-scoped one refused with the server's error typed), refreshes with a
// narrower scope and revokes. The references are the server's own answers to the
// user's session token and test/oauth's direct HTTP calls.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  authorizationCode, authorizationUrl, createPkce, exchangeCode, ProvenantClient, ProvenantError, randomState, refreshAccessToken, revokeToken, userInfo,
  type OAuthApp,
} from '../../src/sdk/index.js';
import { apiRequest, startTestServer, testEngine, type TestServer } from '../helpers/server.js';
import { newSigner, S } from '../public/support.js';
import { Browser, registerApp } from '../oauth/support.js';

const test = suite('sdk oauth against the server');
let srv: TestServer;

test.before(async () => {
  srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off' }, { engine: testEngine(import.meta.url) });
});
test.after(async () => {
  await srv.close();
});

/** Runs `call`; it must reject with a ProvenantError of `status` and `code`. */
async function refused(call: () => Promise<unknown>, status: number, code: string): Promise<ProvenantError> {
  let caught: unknown = null;
  try {
    await call();
  } catch (err) {
    caught = err;
  }
  assert.instance(caught, ProvenantError, `expected ${status} ${code}, got ${String(caught)}`);
  const e = caught as ProvenantError;
  assert.is(e.status, status, `${e.code}: ${e.message}`);
  assert.is(e.code, code, e.message);
  return e;
}

test('authorize, exchange, userinfo, scope-gated sign-it calls, narrower refresh, revoke', async () => {
  const registered = await registerApp(srv, ['openid', 'display_name', 'verify', 'sign']);
  const signer = await newSigner(srv, { displayName: 'SDK User' });
  const app: OAuthApp = { baseUrl: srv.url, clientId: registered.clientId };

  // the front channel: the SDK's URL, driven through sign-in and consent
  const pkce = await createPkce();
  const state = randomState();
  const url = new URL(authorizationUrl(app, { redirectUri: registered.redirectUri, scope: ['openid', 'display_name', 'verify'], state, codeChallenge: pkce.codeChallenge }));
  assert.is(`${url.origin}${url.pathname}`, `${srv.url}/oauth/authorize`);
  const landing = await new Browser(srv.url).authorize(url.search.slice(1), { email: signer.email });
  assert.is(`${landing.origin}${landing.pathname}`, registered.redirectUri);
  assert.is(landing.searchParams.get('iss'), srv.deps.config.baseUrl, 'RFC 9207 iss on the redirect');
  const code = authorizationCode(app, landing, state);
  assert.is(code, landing.searchParams.get('code'));
  assert.throws(() => authorizationCode(app, landing, randomState()), (e: unknown) => e instanceof ProvenantError && e.code === 'invalid_state');
  assert.throws(() => authorizationCode({ ...app, baseUrl: 'https://other.example' }, landing, state), (e: unknown) => e instanceof ProvenantError && e.code === 'invalid_issuer');

  const pair = await exchangeCode(app, { code, redirectUri: registered.redirectUri, codeVerifier: pkce.codeVerifier });
  assert.is(pair.token_type, 'Bearer');
  assert.is(pair.scope, 'openid display_name verify');
  assert.is(pair.expires_in, 24 * 3600);
  assert.equal(await userInfo(app, pair.access_token), { sub: signer.userId, name: 'SDK User', scope: 'openid display_name verify' });

  // sign-it with the access token: quota (verify) as the server answers that token over plain
  // HTTP (an app with no organization: tier `unknown`, spec 2.5); sign refused
  const client = new ProvenantClient({ baseUrl: srv.url, token: pair.access_token });
  const reference = await apiRequest(srv.url, 'GET', `${S}/quota`, { token: pair.access_token });
  assert.is(reference.status, 200, reference.text);
  assert.is(reference.body.tier, 'unknown');
  assert.equal(await client.quota(), reference.body);
  const noSign = await refused(() => client.sign({ file_hash: 'ab'.repeat(32) }), 403, 'insufficient_scope');
  const raw = await apiRequest(srv.url, 'POST', `${S}/sign`, { token: pair.access_token, body: { file_hash: 'ab'.repeat(32) } });
  assert.is(raw.status, 403, raw.text);
  assert.equal(noSign.body, raw.body, 'the SDK keeps the server\'s whole error body');
  assert.is(noSign.message, raw.body.message);

  // refresh, narrower: the refresh token is not rotated; the new access token carries no display_name
  const narrow = await refreshAccessToken(app, pair.refresh_token, ['verify']);
  assert.is(narrow.scope, 'openid verify');
  assert.is(narrow.refresh_token, pair.refresh_token);
  assert.equal(await userInfo(app, narrow.access_token), { sub: signer.userId, scope: 'openid verify' });
  await refused(() => refreshAccessToken(app, pair.refresh_token, 'openid sign'), 400, 'invalid_scope');

  // revoke the refresh token: its access tokens stop working, and so does the refresh token
  await revokeToken(app, pair.refresh_token);
  await refused(() => userInfo(app, pair.access_token), 401, 'invalid_token');
  await refused(() => userInfo(app, narrow.access_token), 401, 'invalid_token');
  await refused(() => client.quota(), 401, 'invalid_token');
  await refused(() => refreshAccessToken(app, pair.refresh_token), 400, 'invalid_grant');
  await revokeToken(app, pair.refresh_token); // again: 200, as the spec says
  // the code, once used, is refused with the OAuth error typed
  await refused(() => exchangeCode(app, { code, redirectUri: registered.redirectUri, codeVerifier: pkce.codeVerifier }), 400, 'invalid_grant');
});

test.run();
