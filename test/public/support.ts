// Signers for the public-surface tests: a registered user with a server-hosted cell,
// a paid tier (so quota never interferes), a verified address (unless `verified: false`;
// the contact relay mails only verified addresses), the profile settings a test names,
// and records signed through POST /sign.
import { createServerCell } from '../../server/src/domain/cells.js';
import { issueEmailVerification, verifyEmail } from '../../server/src/domain/email-verification.js';
import type { PublicField } from '../../server/src/store/index.js';
import { apiRequest, type TestServer } from '../helpers/server.js';

export const S = '/api/v1/sign-it';

export interface Signer {
  token: string;
  userId: string;
  email: string;
  agentKey: string;
}

export async function newSigner(
  srv: TestServer,
  opts: { displayName?: string; username?: string; publicFields?: PublicField[]; contactOptIn?: boolean; email?: string; verified?: boolean } = {},
): Promise<Signer> {
  const { token, user } = await srv.register(opts.email, { display_name: opts.displayName, username: opts.username });
  if (opts.verified !== false) {
    // the link a verification mail carries, issued and used as the confirm button uses it
    const stored = await srv.deps.store.accounts.getUser(user.id);
    const link = await issueEmailVerification(srv.deps, stored as typeof stored & { email: string }, Date.now());
    await verifyEmail(srv.deps, link.token, Date.now());
  }
  const cell = await createServerCell(srv.deps, user.id);
  await srv.deps.store.accounts.setUserTier(user.id, 'premium_plus');
  if (opts.publicFields || opts.contactOptIn !== undefined) {
    const r = await apiRequest(srv.url, 'PATCH', '/api/v1/auth/me', {
      token,
      body: { ...(opts.publicFields ? { public_fields: opts.publicFields } : {}), ...(opts.contactOptIn !== undefined ? { contact_opt_in: opts.contactOptIn } : {}) },
    });
    if (r.status !== 200) throw new Error(`PATCH /me: ${r.status} ${r.text}`);
  }
  return { token, userId: user.id, email: user.email as string, agentKey: cell.agentKey };
}

/** Signs through POST /sign; returns the action hash. */
export async function sign(srv: TestServer, signer: Signer, body: Record<string, unknown>): Promise<string> {
  const r = await apiRequest(srv.url, 'POST', `${S}/sign`, { token: signer.token, body });
  if (r.status !== 200) throw new Error(`sign: ${r.status} ${r.text}`);
  return r.body.action_hash as string;
}

export async function revoke(srv: TestServer, signer: Signer, actionHash: string, reason = 'withdrawn'): Promise<void> {
  const r = await apiRequest(srv.url, 'POST', `${S}/revoke`, { token: signer.token, body: { action_hash: actionHash, reason } });
  if (r.status !== 200) throw new Error(`revoke: ${r.status} ${r.text}`);
}
