// The pages a verification link opens (GET /api/v1/auth/email/verify): plain HTML, no
// script, under the OAuth pages' strict Content-Security-Policy (oauth/pages.ts).
import type { Context } from 'koa';
import { ApiError, type DomainError } from '../errors.js';
import { sendPage } from '../oauth/pages.js';
import { escapeMarkup as e } from '../public/present.js';

export function emailVerifiedPage(ctx: Context, email: string): void {
  sendPage(ctx, 200, 'E-mail address confirmed', `<h1>Your e-mail address is confirmed</h1><p>${e(email)} is now verified. Apps you allow to see your e-mail address will be told so.</p><p class="muted">You can close this page.</p>`, null);
}

/** A link that verified nothing: the error table's status, the reason in words, and the code. */
export function emailVerificationErrorPage(ctx: Context, err: DomainError): void {
  const { status } = ApiError.of(err);
  sendPage(ctx, status, 'E-mail address not confirmed', `<h1>Your e-mail address was not confirmed</h1><p class="error" role="alert">${e(err.message)}</p><p class="muted">Error: ${e(err.code)}.</p>`, null);
}
