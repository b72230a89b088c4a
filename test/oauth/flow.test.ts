// The whole flow as an app runs it, with an independent strict client library
// (oauth4webapi): RFC 8414 discovery, PKCE S256 and state, the user's browser through
// sign-in and consent, the app's own callback server on loopback checking state and
// iss (RFC 9207), the code exchange, userinfo, a refresh, revocation. oauth4webapi
// refuses plain http by default; the server here is loopback http, so every call
// passes its `allowInsecureRequests` option (the one concession; nothing else is
// relaxed).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oauth from 'oauth4webapi';
import { apiRequest, startTestServer, testEngine, type TestServer } from '../helpers/server.js';
import { Browser, newAccount } from './support.js';

const test = suite('oauth flow with oauth4webapi');
let srv: TestServer;
let appServer: Server;
let callbackUrl = '';
const insecure = { [oauth.allowInsecureRequests]: true } as const;

/** What the app's callback did with each redirect it received. */
let onCallback: (url: URL) => Promise<unknown> = async () => null;

test.before(async () => {
  srv = await startTestServer({ PROVENANT_RATE_LIMIT: 'off' }, { engine: testEngine(import.meta.url) });
  appServer = createServer(async (req, res) => {
    try {
      const result = await onCallback(new URL(req.url!, callbackUrl));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result));
    } catch (err) {
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ failed: err instanceof Error ? `${err.name}: ${err.message}` : String(err), code: (err as { code?: string }).code, error: (err as { error?: string }).error }));
    }
  });
  await new Promise<void>((resolve) => appServer.listen(0, '127.0.0.1', resolve));
  callbackUrl = `http://127.0.0.1:${(appServer.address() as AddressInfo).port}/callback`;
});
test.after(async () => {
  await new Promise((resolve) => appServer.close(resolve));
  await srv.close();
});

/** The app, registered by its developer with the loopback callback. */
async function registeredApp(): Promise<oauth.Client> {
  const owner = await srv.register();
  const r = await apiRequest(srv.url, 'POST', '/api/v1/developer/apps', { token: owner.token, body: { name: 'Flow App', redirect_uris: [callbackUrl], scopes: ['openid', 'display_name', 'verify'] } });
  assert.is(r.status, 201, r.text);
  return { client_id: r.body.client_id, token_endpoint_auth_method: 'none' };
}

async function discover(): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(srv.deps.config.baseUrl);
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
}

test('discovery, authorization with PKCE and state, code exchange, userinfo, refresh and revocation', async () => {
  const as = await discover();
  assert.equal(as.code_challenge_methods_supported, ['S256']);
  const client = await registeredApp();
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({
    response_type: 'code', client_id: client.client_id, redirect_uri: callbackUrl, scope: 'openid display_name verify', state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
  }).toString();

  // the app's callback: what oauth4webapi makes of the redirect, the exchange and the calls after it
  onCallback = async (current) => {
    const params = oauth.validateAuthResponse(as, client, current, state);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, callbackUrl, verifier, insecure));
    return { tokens };
  };

  const account = await newAccount(srv, { displayName: 'Flow User' });
  const browser = new Browser(srv.url);
  const landing = await browser.authorize(url.search.slice(1), account);
  assert.is(`${landing.origin}${landing.pathname}`, callbackUrl);
  const atApp = await fetch(landing);
  const { tokens, failed } = (await atApp.json()) as { tokens: oauth.TokenEndpointResponse; failed?: string };
  assert.is(failed, undefined, failed);
  assert.is(tokens.token_type, 'bearer', 'oauth4webapi normalises the type');
  assert.is(tokens.expires_in, 86400);
  assert.is(tokens.scope, 'openid display_name verify');

  const info = await oauth.processUserInfoResponse(as, client, account.id, await oauth.userInfoRequest(as, client, tokens.access_token, insecure));
  assert.is(info.sub, account.id);
  assert.is(info.name, 'Flow User');

  const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure));
  assert.is(refreshed.refresh_token, tokens.refresh_token, 'not rotated');
  const quota = await apiRequest(srv.url, 'GET', '/api/v1/sign-it/quota', { token: refreshed.access_token });
  assert.is(quota.status, 200, 'the verify scope opens the quota');

  await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), tokens.refresh_token!, { additionalParameters: { token_type_hint: 'refresh_token' }, ...insecure }));
  const after = await oauth.userInfoRequest(as, client, refreshed.access_token, insecure);
  assert.is(after.status, 401);
  assert.match(after.headers.get('www-authenticate')!, /error="invalid_token"/);
});

test('oauth4webapi sees the redirect\'s iss and state: a denial surfaces as access_denied; a replayed code as invalid_grant', async () => {
  const as = await discover();
  const client = await registeredApp();
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const query = new URLSearchParams({
    response_type: 'code', client_id: client.client_id, redirect_uri: callbackUrl, scope: 'openid', state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
  }).toString();
  const account = await newAccount(srv);

  const denied = await new Browser(srv.url).authorize(query, account, 'deny');
  try {
    oauth.validateAuthResponse(as, client, denied, state);
    assert.unreachable('a denial is an error');
  } catch (err) {
    assert.instance(err, oauth.AuthorizationResponseError);
    assert.is((err as oauth.AuthorizationResponseError).error, 'access_denied');
  }

  const landing = await new Browser(srv.url).authorize(query, account);
  const params = oauth.validateAuthResponse(as, client, landing, state);
  await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, callbackUrl, verifier, insecure));
  try {
    await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, callbackUrl, verifier, insecure));
    assert.unreachable('a replayed code is refused');
  } catch (err) {
    assert.instance(err, oauth.ResponseBodyError);
    assert.is((err as oauth.ResponseBodyError).error, 'invalid_grant');
  }

  // an iss that is not the server's is caught by the client (RFC 9207)
  const forged = new URL(landing);
  forged.searchParams.set('iss', 'https://evil.example');
  assert.throws(() => oauth.validateAuthResponse(as, client, forged, state));
});

test.run();
