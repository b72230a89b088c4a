// E-mail address verification (spec 2.8: the `email` scope shares only verified
// addresses). A link carries a token of 32 random bytes; the store keeps only its
// SHA-256, bound to the address it was sent to, used once, valid 24 hours. Mail is sent
// off the request path (VerificationMailQueue): registration never waits on SMTP, and a
// send that failed is followed by a new request for a link.
import { createHash, randomBytes } from 'node:crypto';
import { DomainError } from '../errors.js';
import type { EmailVerificationOutcome, User } from '../store/index.js';
import { userOfToken } from './accounts.js';
import type { DomainDeps } from './deps.js';

/** A link is valid this long after it is sent. */
export const EMAIL_VERIFICATION_TTL_MS = 24 * 60 * 60 * 1000;
/** Used and expired links are told apart from unknown ones this long after they expire. */
const KEEP_EXPIRED_MS = 30 * 24 * 60 * 60 * 1000;
/** 32 bytes in base64url, unpadded. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** Where a verification mail is handed: sends it later, never on the caller's path. */
export interface VerificationMailQueue {
  queue(user: User): void;
}

export function verificationTokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** The link a message carries: GET /api/v1/auth/email/verify on the public base URL. */
export function verificationLink(baseUrl: string, token: string): string {
  return `${baseUrl}/api/v1/auth/email/verify?token=${token}`;
}

/** A new link for the user's current address, stored by its hash (the mailer calls this when it sends). */
export async function issueEmailVerification(deps: DomainDeps, user: User & { email: string }, now: number): Promise<{ token: string; expiresAt: number }> {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = now + EMAIL_VERIFICATION_TTL_MS;
  await deps.store.emailVerifications.create({ hash: verificationTokenHash(token), userId: user.id, email: user.email, createdAt: now, expiresAt }, now - KEEP_EXPIRED_MS);
  return { token, expiresAt };
}

/** A user whose address a link may verify: one with an address, not verified yet. */
export function needsVerification(user: User): user is User & { email: string } {
  return user.email !== null && !user.emailVerified;
}

/**
 * The resend endpoint: invalid_request for an account without an address; an account
 * verified already is told so and sent nothing; otherwise a link is queued.
 */
export async function requestEmailVerification(
  deps: DomainDeps & { verificationMail: VerificationMailQueue },
  userId: string,
): Promise<{ email: string; queued: boolean }> {
  const user = await userOfToken(deps, userId);
  if (user.email === null) throw new DomainError('invalid_request', 'This account has no e-mail address to verify.');
  if (!needsVerification(user)) return { email: user.email, queued: false };
  deps.verificationMail.queue(user);
  return { email: user.email, queued: true };
}

const REFUSALS: Record<Exclude<EmailVerificationOutcome['outcome'], 'verified'>, string> = {
  unknown: 'This verification link is not one we sent, or it was copied incompletely.',
  used: 'This verification link was used already. If you followed it before, your address is verified.',
  expired: 'This verification link has expired (links are valid for 24 hours). Sign in and ask for a new one.',
  stale: 'This verification link was sent to an address the account no longer has.',
};

/** A link's token, or invalid_verification_token for one this server never sends (the wrong shape); uses nothing up. */
export function verificationTokenOf(token: unknown): string {
  if (typeof token !== 'string' || !TOKEN_SHAPE.test(token)) throw new DomainError('invalid_verification_token', REFUSALS.unknown, { reason: 'unknown' });
  return token;
}

/** Uses a link up (the confirmation page's button): the verified address, or invalid_verification_token saying why not. */
export async function verifyEmail(deps: DomainDeps, token: unknown, now: number): Promise<{ email: string }> {
  verificationTokenOf(token);
  const result = await deps.store.emailVerifications.consume(verificationTokenHash(token as string), now);
  if (result.outcome !== 'verified') throw new DomainError('invalid_verification_token', REFUSALS[result.outcome], { reason: result.outcome });
  return { email: result.email };
}
