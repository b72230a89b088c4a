// Request checks of the public surfaces (spec 4.6, 4.13, 4.14; decisions.md 9): the
// creator id, the badge's options and the contact relay's body. The zod schemas are
// also what GET /openapi.json describes these requests with.
import { z } from 'zod';
import { isPlainObject, normalizeAgentKey, parseIdentity, agentKeyFromPublicKey } from 'provenant';
import { CONTACT_LIMITS, CONTACT_PURPOSES } from '../domain/contact.js';
import { ApiError } from '../errors.js';
import type { NewContactRequest } from '../store/index.js';

/** Spec 4.6: `:id` is an agent key (any accepted form) or a DID; returned as the canonical agent key. */
export function parseCreatorId(id: string): string {
  const key = parseIdentity(id);
  if (key === null) throw new ApiError('invalid_id', undefined, { field: 'id' });
  return agentKeyFromPublicKey(key);
}

export const BADGE_FORMATS = ['svg', 'json'] as const;
export const BADGE_STYLES = ['badge', 'minimal'] as const;
export const BADGE_THEMES = ['light', 'dark'] as const;

/** decisions.md 9: `GET S:/badge?hash=&format=svg|json&style=badge|minimal&theme=light|dark`. */
export const badgeQuery = z.object({
  hash: z.string().describe('SHA-256 of the file, 64 hex characters'),
  format: z.enum(BADGE_FORMATS).default('svg'),
  style: z.enum(BADGE_STYLES).default('badge'),
  theme: z.enum(BADGE_THEMES).default('light'),
});
export type BadgeOptions = Omit<z.output<typeof badgeQuery>, 'hash'>;

/** The badge's options; a value outside its list is 400 invalid_request naming the field. */
export function parseBadgeOptions(query: Record<string, unknown>): BadgeOptions {
  const first = (v: unknown) => (Array.isArray(v) ? v[0] : v === '' ? undefined : v);
  const out: Record<string, string> = {};
  for (const [field, allowed] of [['format', BADGE_FORMATS], ['style', BADGE_STYLES], ['theme', BADGE_THEMES]] as const) {
    const value = first(query[field]);
    if (value === undefined) continue;
    if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
      throw new ApiError('invalid_request', `${field} must be one of ${allowed.join(', ')}.`, { field });
    }
    out[field] = value;
  }
  return { format: 'svg', style: 'badge', theme: 'light', ...out } as BadgeOptions;
}

/** Spec 4.13's body, as OpenAPI shows it (the relay itself never refuses one: parseContact). */
export const contactBody = z.object({
  signer_agent_key: z.string().describe('agent key (uhCAk...) or plain base64'),
  file_hash: z.string().optional().describe('64 hex; omit for a profile contact'),
  sender_name: z.string().max(CONTACT_LIMITS.sender_name),
  sender_email: z.string().max(CONTACT_LIMITS.sender_email),
  message: z.string().max(CONTACT_LIMITS.message),
  purpose: z.string().optional().describe(`${CONTACT_PURPOSES.join(', ')}; anything else is recorded as other`),
});

/**
 * Characters that end or split a header line (CR, LF, NEL, the Unicode line and paragraph
 * separators) and every other control character: a header built from the value can
 * only ever be one line.
 */
const HEADER_UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;
/** In the message body only line feeds and tabs survive; CR LF and lone CRs become LF. */
const BODY_UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]+/g;

/** A display name fit for a header: controls become one space, runs of space one, trimmed. */
export function headerSafe(text: string): string {
  return text.replace(HEADER_UNSAFE, ' ').replace(/ {2,}/g, ' ').trim();
}

function bodySafe(text: string): string {
  return text.replace(/\r\n?/g, '\n').replace(BODY_UNSAFE, ' ').trim();
}

/**
 * An address the relay will put in Reply-To: a dot-atom local part (no quotes, spaces,
 * angle brackets, commas or semicolons, so it cannot name a second address) and a
 * dotted host name.
 */
const SENDER_EMAIL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

const isText = (v: unknown, max: number): v is string => typeof v === 'string' && v.length <= max && v.trim() !== '' && !/\p{Cs}/u.test(v);

/**
 * Spec 4.13: the request to queue, or null for one the relay drops without a word
 * (the answer is the same either way): a missing or malformed field, a text over its
 * limit, an address that is not one plain address.
 */
export function parseContact(body: unknown, now: number): NewContactRequest | null {
  if (!isPlainObject(body)) return null;
  const { signer_agent_key: signer, file_hash: fileHash, sender_name: name, sender_email: email, message, purpose } = body;
  const signerAgentKey = typeof signer === 'string' ? normalizeAgentKey(signer) : null;
  if (signerAgentKey === null) return null;
  if (fileHash !== undefined && fileHash !== null && (typeof fileHash !== 'string' || !/^[0-9a-fA-F]{64}$/.test(fileHash))) return null;
  if (!isText(name, CONTACT_LIMITS.sender_name) || !isText(message, CONTACT_LIMITS.message)) return null;
  if (typeof email !== 'string' || email.length > CONTACT_LIMITS.sender_email || !SENDER_EMAIL.test(email)) return null;
  const senderName = headerSafe(name);
  if (senderName === '') return null;
  return {
    signerAgentKey,
    fileHash: typeof fileHash === 'string' ? fileHash.toLowerCase() : null,
    senderName,
    senderEmail: email,
    message: bodySafe(message),
    purpose: (CONTACT_PURPOSES as readonly unknown[]).includes(purpose) ? (purpose as NewContactRequest['purpose']) : 'other',
    createdAt: now,
  };
}
