// Request bodies of /api/v1/developer (decisions.md 5).
import { z } from 'zod';
import { WITHOUT_NUL, withoutNul } from '../validate.js';
import { redirectUriProblem } from '../oauth/rules.js';

/** The scopes of spec 2.8. */
export const APP_SCOPES = ['openid', 'display_name', 'username', 'email', 'profile_picture', 'did', 'public_key', 'holochain', 'sign', 'verify'] as const;

/**
 * Absolute URIs without a fragment (RFC 6749 3.1.2): https, http only on a loopback
 * host, or a native app's private-use scheme (oauth/rules.ts redirectUriProblem);
 * matched exactly at authorize time.
 */
export const redirectUri = z
  .string()
  .max(2048)
  .superRefine((s, ctx) => {
    const problem = redirectUriProblem(s);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
  });

export const createAppBody = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').max(100).refine(withoutNul, WITHOUT_NUL),
  redirect_uris: z.array(redirectUri).max(20).default([]),
  scopes: z.array(z.enum(APP_SCOPES)).max(APP_SCOPES.length).default(['openid']),
  org_id: z.uuid('must be an organization id (UUID)').nullable().optional(),
});
