// Checking a webhook delivery's signature on the receiving side (spec 6 rule 2;
// decisions.md 8): X-Service-Signature is the hex HMAC-SHA256 of the exact body bytes,
// keyed by the webhook's secret (the 64-hex string, as UTF-8 text).
import { hmacSha256 } from './hmac.js';

const HEX64 = /^[0-9a-fA-F]{64}$/;

/**
 * Whether `header` (the X-Service-Signature value) is the HMAC-SHA256 of `rawBody`
 * under `secret`. Compares all 32 bytes whatever the first difference (constant time);
 * a missing or malformed header is false. Pass the body exactly as received, before
 * any JSON parsing.
 */
export function verifyWebhookSignature(secret: string | Uint8Array, rawBody: Uint8Array | string, header: string | null | undefined): boolean {
  if (typeof header !== 'string' || !HEX64.test(header)) return false;
  const expected = hmacSha256(secret, rawBody);
  let difference = 0;
  for (let i = 0; i < 32; i++) difference |= expected[i] ^ parseInt(header.substr(i * 2, 2), 16);
  return difference === 0;
}
