// The pages a verification link opens (GET /api/v1/auth/email/verify): plain HTML, no
// script, under the OAuth pages' strict Content-Security-Policy (oauth/pages.ts).
//
// Opening the link changes nothing: mail scanners and link previews fetch links, and a
// GET that verified would let an attacker who registered with someone else's address
// have it verified by that person's scanner. The page's button confirms (a POST back to
// the same path) with a CSRF token bound to a cookie of this path and to the link's
// token, as the OAuth pages bind theirs (oauth/pages.ts), so another site cannot make a
// form that confirms.
import type { Context } from 'koa';
import { verificationTokenHash } from '../domain/email-verification.js';
import { ApiError, type DomainError } from '../errors.js';
import { csrfToken, csrfTokenValid, sendPage, type CsrfCookie, type PageDeps } from '../oauth/pages.js';
import { escapeMarkup as e } from '../public/present.js';

export const EMAIL_VERIFY_PATH = '/api/v1/auth/email/verify';
const CONFIRM_CSRF: CsrfCookie = { name: 'provenant_csrf_email', path: EMAIL_VERIFY_PATH };
const CONFIRM_PURPOSE = 'email-verify';

/** The button that confirms the link's address: a form posting the link's token back, with its CSRF token. */
export function emailConfirmPage(ctx: Context, deps: PageDeps, token: string): void {
  const csrf = csrfToken(ctx, deps, CONFIRM_PURPOSE, verificationTokenHash(token), '', CONFIRM_CSRF);
  sendPage(ctx, 200, 'Confirm your e-mail address', `<h1>Confirm your e-mail address</h1>
<p>Press the button to confirm that this address is yours and that you asked for a Provenant account with it.</p>
<form method="post" action="${EMAIL_VERIFY_PATH}">
<input type="hidden" name="token" value="${e(token)}">
<input type="hidden" name="csrf_token" value="${e(csrf)}">
<button type="submit">Confirm my address</button>
</form>
<p class="muted">If you did not ask for an account, close this page: nothing changes until the button is pressed.</p>`, null);
}

/** Whether a posted confirmation carries the CSRF token its page gave this browser for this link (constant time). */
export function emailConfirmFormValid(ctx: Context, deps: Pick<PageDeps, 'secrets'>, token: string, csrf: unknown): boolean {
  return csrfTokenValid(ctx, deps, csrf, CONFIRM_PURPOSE, verificationTokenHash(token), '', CONFIRM_CSRF);
}

export function emailVerifiedPage(ctx: Context, email: string): void {
  sendPage(ctx, 200, 'E-mail address confirmed', `<h1>Your e-mail address is confirmed</h1><p>${e(email)} is now verified. Apps you allow to see your e-mail address will be told so.</p><p class="muted">You can close this page.</p>`, null);
}

/** A confirmation that did not come from the page (no cookie, another link's or another site's form): 403, verifying nothing. */
export function emailConfirmForgedPage(ctx: Context): void {
  sendPage(ctx, 403, 'E-mail address not confirmed', '<h1>Your e-mail address was not confirmed</h1><p class="error" role="alert">The form expired or did not come from this page; open the link in the e-mail again and press the button.</p><p class="muted">Error: invalid_request.</p>', null);
}

/** A link that verified nothing: the error table's status, the reason in words, and the code. */
export function emailVerificationErrorPage(ctx: Context, err: DomainError): void {
  const { status } = ApiError.of(err);
  sendPage(ctx, status, 'E-mail address not confirmed', `<h1>Your e-mail address was not confirmed</h1><p class="error" role="alert">${e(err.message)}</p><p class="muted">Error: ${e(err.code)}.</p>`, null);
}
