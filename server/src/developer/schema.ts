// Request bodies of /api/v1/developer (decisions.md 5).
import { z } from 'zod';
import { WITHOUT_NUL, withoutNul } from '../validate.js';

/** The scopes of spec 2.8. */
export const APP_SCOPES = ['openid', 'display_name', 'username', 'email', 'profile_picture', 'did', 'public_key', 'holochain', 'sign', 'verify'] as const;

/** Absolute http(s) URIs without a fragment (RFC 6749 3.1.2); matched exactly at authorize time. */
export const redirectUri = z
  .string()
  .max(2048)
  .refine((s) => {
    if (!URL.canParse(s)) return false;
    const u = new URL(s);
    return (u.protocol === 'https:' || u.protocol === 'http:') && u.hash === '' && !s.includes('#');
  }, 'must be an absolute http(s) URI without a fragment');

export const createAppBody = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').max(100).refine(withoutNul, WITHOUT_NUL),
  redirect_uris: z.array(redirectUri).max(20).default([]),
  scopes: z.array(z.enum(APP_SCOPES)).max(APP_SCOPES.length).default(['openid']),
  org_id: z.uuid('must be an organization id (UUID)').nullable().optional(),
});
