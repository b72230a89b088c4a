// Request bodies of /api/v1/auth (decisions.md 5).
import { z } from 'zod';
import { PUBLIC_FIELDS } from '../store/index.js';
import { WITHOUT_NUL, withoutNul } from '../validate.js';

const USERNAME = /^[A-Za-z0-9_.-]{3,32}$/;

export const email = z.email('must be an e-mail address').max(254);
export const password = z.string().min(8, 'must be at least 8 characters').max(1024);
export const displayName = z.string().trim().min(1, 'must not be empty').max(100).refine(withoutNul, WITHOUT_NUL);
export const username = z.string().regex(USERNAME, 'must be 3-32 letters, digits, _ . or -');
export const profilePicture = z
  .string()
  .max(2048)
  .refine((s) => /^https?:\/\//i.test(s) && URL.canParse(s), 'must be an http(s) URL');

export const registerBody = z.strictObject({
  email,
  password,
  display_name: displayName.optional(),
  username: username.optional(),
});

export const loginBody = z.strictObject({
  email_or_username: z.string().min(1, 'is required').max(254).refine(withoutNul, WITHOUT_NUL),
  password: z.string().min(1, 'is required').max(1024),
});

export const patchMeBody = z.strictObject({
  display_name: displayName.nullable().optional(),
  username: username.nullable().optional(),
  profile_picture: profilePicture.nullable().optional(),
  public_fields: z.array(z.enum(PUBLIC_FIELDS)).max(PUBLIC_FIELDS.length).optional(),
  contact_opt_in: z.boolean().optional(),
});

/** POST /password: the current password, and the new one (the rules of registration). */
export const passwordChangeBody = z.strictObject({
  current_password: z.string().min(1, 'is required').max(1024),
  new_password: password,
});

/** The vault login's requests, as the SDK sends them (provenant/api). */
export { challengeRequest as challengeBody, signedChallengeRequest as signedChallengeBody } from 'provenant/api';
