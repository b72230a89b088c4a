// The SDK's OAuth 2.0 + PKCE helpers (RFC 6749, RFC 7636, spec 4.16) against a loopback
// stand-in (the real server: test/sdk/oauth-server.test.ts) that checks what the spec
// requires of a client: response_type code, S256, the
// challenge recomputed with node:crypto from the verifier at the token endpoint, the
// redirect_uri and client_id of the code, state returned as sent; then refresh,
// userinfo and revoke. The PKCE challenge is also checked against RFC 7636 Appendix B
// and against oauth4webapi.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oauth from 'oauth4webapi';
import {
  authorizationCode, authorizationUrl, codeChallengeOf, createPkce, exchangeCode, ProvenantError, randomState, refreshAccessToken, revokeToken, userInfo,
} from '../../src/sdk/index.js';

const test = suite('sdk oauth');
const CLIENT_ID = '6f1c1c1e-7d43-4a8e-9d0e-1b2c3d4e5f60';
const REDIRECT = 'http://127.0.0.1:9/callback';

let standIn: Server;
let base = '';
const codes = new Map<string, { challenge: string; redirect: string; client: string; scope: string }>();
const refreshTokens = new Set<string>();
const accessTokens = new Set<string>();
const seen: { token: Record<string, unknown>[] } = { token: [] };

async function body(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) text += chunk;
  return JSON.parse(text) as Record<string, unknown>;
}

const b64url = (b: Buffer): string => b.toString('base64url');

test.before(async () => {
  standIn = createServer(async (req, res) => {
    const url = new URL(req.url!, base);
    const json = (status: number, value: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(value));
    };
    if (url.pathname === '/oauth/authorize') {
      const q = url.searchParams;
      const ok = q.get('response_type') === 'code' && q.get('client_id') === CLIENT_ID && q.get('redirect_uri') === REDIRECT
        && q.get('code_challenge_method') === 'S256' && /^[A-Za-z0-9_-]{43}$/.test(q.get('code_challenge') ?? '') && q.get('scope')?.split(' ').includes('openid');
      const back = new URL(REDIRECT);
      if (!ok) back.searchParams.set('error', 'invalid_request');
      else {
        const code = b64url(randomBytes(16));
        codes.set(code, { challenge: q.get('code_challenge')!, redirect: q.get('redirect_uri')!, client: q.get('client_id')!, scope: q.get('scope')! });
        back.searchParams.set('code', code);
      }
      back.searchParams.set('state', q.get('state') ?? '');
      back.searchParams.set('iss', base);
      res.writeHead(302, { location: back.toString() });
      return res.end();
    }
    if (url.pathname === '/oauth/token' && req.method === 'POST') {
      const b = await body(req);
      seen.token.push(b);
      if (b.grant_type === 'authorization_code') {
        const grant = codes.get(String(b.code));
        codes.delete(String(b.code)); // single use
        const challenge = b64url(createHash('sha256').update(String(b.code_verifier)).digest());
        if (!grant || grant.challenge !== challenge || grant.redirect !== b.redirect_uri || grant.client !== b.client_id) {
          return json(400, { error: 'invalid_grant', error_description: 'code, verifier, redirect_uri or client_id do not match' });
        }
        const access = b64url(randomBytes(24));
        const refresh = b64url(randomBytes(24));
        accessTokens.add(access);
        refreshTokens.add(refresh);
        return json(200, { access_token: access, token_type: 'Bearer', expires_in: 86400, refresh_token: refresh, scope: grant.scope });
      }
      if (b.grant_type === 'refresh_token' && refreshTokens.has(String(b.refresh_token)) && b.client_id === CLIENT_ID) {
        const access = b64url(randomBytes(24));
        accessTokens.add(access);
        return json(200, { access_token: access, token_type: 'Bearer', expires_in: 86400, refresh_token: b.refresh_token, scope: b.scope ?? 'openid did' });
      }
      return json(400, { error: 'invalid_grant', error_description: 'unknown refresh token' });
    }
    if (url.pathname === '/oauth/userinfo') {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (!token || !accessTokens.has(token)) {
        res.setHeader('www-authenticate', 'Bearer');
        return json(401, { error: 'invalid_token', error_description: 'the access token is invalid' });
      }
      return json(200, { sub: 'user-1', did: 'did:key:z6Mk', scope: 'openid did' });
    }
    if (url.pathname === '/oauth/revoke' && req.method === 'POST') {
      const b = await body(req);
      if (b.client_id !== CLIENT_ID) return json(400, { error: 'invalid_request', error_description: 'client_id' });
      refreshTokens.delete(String(b.token));
      return json(200, {});
    }
    json(404, { error: 'not_found' });
  });
  await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(standIn.address() as AddressInfo).port}`;
});
test.after(() => new Promise<void>((resolve) => standIn.close(() => resolve())));

test('S256 challenge: RFC 7636 Appendix B, oauth4webapi, node:crypto', async () => {
  assert.is(await codeChallengeOf('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'), 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  for (let i = 0; i < 20; i++) {
    const { codeVerifier, codeChallenge } = await createPkce();
    assert.match(codeVerifier, /^[A-Za-z0-9_-]{43}$/); // 43-128 unreserved characters (RFC 7636 4.1)
    assert.is(codeChallenge, await oauth.calculatePKCECodeChallenge(codeVerifier));
    assert.is(codeChallenge, b64url(createHash('sha256').update(codeVerifier).digest()));
  }
  assert.is.not(randomState(), randomState());
});

test('the whole flow: authorize URL, redirect with state and iss, code exchange, userinfo, refresh, revoke', async () => {
  const app = { baseUrl: base, clientId: CLIENT_ID };
  const { codeVerifier, codeChallenge } = await createPkce();
  const state = randomState();
  const url = new URL(authorizationUrl(app, { redirectUri: REDIRECT, scope: ['openid', 'did'], state, codeChallenge }));
  assert.equal(Object.fromEntries(url.searchParams), {
    response_type: 'code', client_id: CLIENT_ID, redirect_uri: REDIRECT, scope: 'openid did', state, code_challenge: codeChallenge, code_challenge_method: 'S256',
  });
  const redirect = await fetch(url, { redirect: 'manual' });
  const location = redirect.headers.get('location')!;
  assert.throws(() => authorizationCode(app, location, randomState()), (e: ProvenantError) => e.code === 'invalid_state');
  assert.throws(() => authorizationCode({ ...app, baseUrl: 'https://other.example' }, location, state), (e: ProvenantError) => e.code === 'invalid_issuer');
  const code = authorizationCode(app, location, state);

  const wrongVerifier = (await createPkce()).codeVerifier;
  const refused = await exchangeCode(app, { code, redirectUri: REDIRECT, codeVerifier: wrongVerifier }).catch((e: ProvenantError) => e);
  assert.equal([(refused as ProvenantError).status, (refused as ProvenantError).code], [400, 'invalid_grant']);

  const again = await fetch(authorizationUrl(app, { redirectUri: REDIRECT, scope: 'openid did', state, codeChallenge }), { redirect: 'manual' });
  const tokens = await exchangeCode(app, { code: authorizationCode(app, again.headers.get('location')!, state), redirectUri: REDIRECT, codeVerifier });
  assert.equal(seen.token.at(-1), { grant_type: 'authorization_code', code: seen.token.at(-1)!.code, redirect_uri: REDIRECT, client_id: CLIENT_ID, code_verifier: codeVerifier });
  assert.is(tokens.token_type, 'Bearer');
  assert.equal(await userInfo(app, tokens.access_token), { sub: 'user-1', did: 'did:key:z6Mk', scope: 'openid did' });

  const refreshed = await refreshAccessToken(app, tokens.refresh_token, 'openid');
  assert.equal(seen.token.at(-1), { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: CLIENT_ID, scope: 'openid' });
  assert.is(refreshed.refresh_token, tokens.refresh_token, 'not rotated (spec 3.4)');
  await revokeToken(app, tokens.refresh_token);
  const afterRevoke = await refreshAccessToken(app, tokens.refresh_token).catch((e: ProvenantError) => e);
  assert.is((afterRevoke as ProvenantError).code, 'invalid_grant');
  const badToken = await userInfo(app, 'nope').catch((e: ProvenantError) => e);
  assert.equal([(badToken as ProvenantError).status, (badToken as ProvenantError).code], [401, 'invalid_token']);
});

test('an error on the redirect rejects with its OAuth code', () => {
  const app = { baseUrl: base, clientId: CLIENT_ID };
  assert.throws(() => authorizationCode(app, `${REDIRECT}?error=access_denied&error_description=no&state=s`, 's'), (e: ProvenantError) => e.code === 'access_denied');
});

test.run();
