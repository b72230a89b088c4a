// /api/v1/auth: register, login, me, vault challenge login, device keys (linking,
// listing, unlinking; decisions.md 5), ending sessions (sign out everywhere, password
// change), e-mail address verification (a link by mail; spec 2.8 shares only verified
// addresses). Every authenticated route here takes the user's session token only (an
// app's OAuth token is refused: issue 25). Each route: limits, auth, the body checked
// (schema.ts), one domain call, the answer (present.ts).
import { Router } from '@koa/router';
import type { Context } from 'koa';
import { isPlainObject } from 'provenant';
import type { ServerDeps } from '../deps.js';
import { ApiError, DomainError } from '../errors.js';
import { rateLimit } from '../ratelimit.js';
import { parseInput } from '../validate.js';
import { requireAuth, SESSION_ONLY } from './middleware.js';
import { PASSWORD_ATTEMPTS, passwordAttempts } from './password-attempts.js';
import { challengeBody, loginBody, passwordChangeBody, patchMeBody, registerBody, signedChallengeBody } from './schema.js';
import { updateProfile } from '../domain/accounts.js';
import { linkedAgents, unlinkDeviceKey } from '../domain/agents.js';
import {
  accountOfSession, changePassword, issueChallenge, linkAgent, login, register, signOutEverywhere, vaultLogin,
} from '../domain/sessions.js';
import { agentsAnswer, challengeAnswer, emailVerificationAnswer, sessionAnswer, sessionsRevokedAnswer, userAnswer } from './present.js';
import { emailConfirmForgedPage, emailConfirmFormValid, emailConfirmPage, emailVerificationErrorPage, emailVerifiedPage } from './pages.js';
import { requestEmailVerification, verificationTokenOf, verifyEmail } from '../domain/email-verification.js';
import { jsonBody } from '../body.js';
import { rateLimitOf } from '../rate-limits.js';

export const AUTH_PREFIX = '/api/v1/auth';

/**
 * A body that is a JSON object. parseInput reads a missing body as {} (fine for
 * POSTs whose schema then names the missing field), but a PATCH would then answer
 * 200 to null, an array or a form having changed nothing.
 */
function jsonObjectBody(ctx: Context): Record<string, unknown> {
  const body = ctx.request.body;
  if (!isPlainObject(body) || ctx.request.is('urlencoded')) {
    throw new ApiError('invalid_request', 'The body must be a JSON object of the fields to change.');
  }
  return body;
}

export function authRoutes(deps: ServerDeps): Router {
  const router = new Router();
  router.use(jsonBody()); // the routes here read JSON bodies (body.ts)
  const session = requireAuth(deps, SESSION_ONLY);

  router.post('/register', rateLimit(deps, rateLimitOf('auth:register')), async (ctx) => {
    const body = parseInput(registerBody, ctx.request.body);
    ctx.status = 201;
    ctx.body = sessionAnswer(await register(deps, body));
  });

  // the password windows the OAuth sign-in form spends too (password-attempts.ts)
  router.post('/login', passwordAttempts(deps), async (ctx) => {
    const body = parseInput(loginBody, ctx.request.body);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = sessionAnswer(await login(deps, body));
  });

  router.get('/me', session, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = userAnswer(await accountOfSession(deps, ctx.state.auth!.userId));
  });

  router.patch('/me', session, async (ctx) => {
    const body = parseInput(patchMeBody, jsonObjectBody(ctx));
    const { account } = await updateProfile(deps, ctx.state.auth!.userId, body);
    ctx.body = userAnswer(account);
  });

  router.post('/vault/challenge', rateLimit(deps, rateLimitOf('auth:vault')), async (ctx) => {
    const body = (ctx.request.body ?? {}) as { agent_pub_key?: unknown };
    ctx.set('Cache-Control', 'no-store');
    ctx.body = challengeAnswer(await issueChallenge(deps, parseInput(challengeBody.partial(), body).agent_pub_key));
  });

  router.post('/vault/token', rateLimit(deps, rateLimitOf('auth:vault')), async (ctx) => {
    const body = parseInput(signedChallengeBody, ctx.request.body);
    const session = await vaultLogin(deps, body);
    ctx.status = session.created ? 201 : 200;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = sessionAnswer(session);
  });

  router.post('/agents', session, async (ctx) => {
    const body = parseInput(signedChallengeBody, ctx.request.body);
    ctx.status = 201;
    ctx.body = userAnswer(await linkAgent(deps, ctx.state.auth!.userId, body));
  });

  // the user's linked device keys
  router.get('/agents', session, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = agentsAnswer(await linkedAgents(deps, ctx.state.auth!.userId));
  });

  // unlinking a key: it can no longer sign in or publish; the records it signed stay
  router.delete('/agents/:agent_pub_key', session, async (ctx) => {
    await unlinkDeviceKey(deps, ctx.state.auth!.userId, ctx.params.agent_pub_key);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = agentsAnswer(await linkedAgents(deps, ctx.state.auth!.userId));
  });

  // "sign out everywhere": every session token issued until now ends, this one too
  router.post('/sessions/revoke', session, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = sessionsRevokedAnswer(await signOutEverywhere(deps, ctx.state.auth!.userId));
  });

  // a password change ends every session issued before it and answers a fresh one; it
  // guesses passwords as login does, so it spends login's window
  router.post('/password', session, rateLimit(deps, PASSWORD_ATTEMPTS.perAddress), async (ctx) => {
    const body = parseInput(passwordChangeBody, ctx.request.body);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = sessionAnswer(await changePassword(deps, ctx.state.auth!.userId, body));
  });

  // a new verification link by mail (the first goes out on registration); 3 an hour per user
  router.post(
    '/email/verification',
    session,
    rateLimit(deps, { ...rateLimitOf('auth:email-verification'), key: (ctx) => ctx.state.auth!.userId }),
    async (ctx) => {
      const result = await requestEmailVerification(deps, ctx.state.auth!.userId);
      ctx.status = result.queued ? 202 : 200;
      ctx.set('Cache-Control', 'no-store');
      ctx.body = emailVerificationAnswer(result);
    },
  );

  // the link in the message: opened in a browser, so answered with a page either way.
  // GET verifies nothing (mail scanners follow links): its page's button POSTs back here
  // with a CSRF token (auth/pages.ts), and that confirms.
  const verifyLimit = rateLimit(deps, rateLimitOf('auth:email-verify'));
  router.get('/email/verify', verifyLimit, async (ctx) => {
    try {
      emailConfirmPage(ctx, deps, verificationTokenOf(ctx.query.token));
    } catch (err) {
      if (!(err instanceof DomainError && err.code === 'invalid_verification_token')) throw err;
      emailVerificationErrorPage(ctx, err);
    }
  });
  router.post('/email/verify', verifyLimit, async (ctx) => {
    const form = (ctx.request.body ?? {}) as { token?: unknown; csrf_token?: unknown };
    try {
      const token = verificationTokenOf(form.token);
      if (!emailConfirmFormValid(ctx, deps, token, form.csrf_token)) return emailConfirmForgedPage(ctx);
      emailVerifiedPage(ctx, (await verifyEmail(deps, token, Date.now())).email);
    } catch (err) {
      if (!(err instanceof DomainError && err.code === 'invalid_verification_token')) throw err;
      emailVerificationErrorPage(ctx, err);
    }
  });

  return router;
}
