// The forms of the authorize pages (decisions.md 7). The OAuth parameters themselves
// are checked by the rules (rules.ts), which name the RFC each one follows.
import { z } from 'zod';
import { loginBody } from '../auth/schema.js';

/** The sign-in form: the login fields of POST /api/v1/auth/login and the page's CSRF token. */
export const signInForm = loginBody.extend({ csrf_token: z.string().max(100) });

/** The consent form: which button, and the page's CSRF token. */
export const consentForm = z.strictObject({
  csrf_token: z.string().max(100),
  decision: z.enum(['approve', 'deny']),
});
