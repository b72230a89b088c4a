// The store's interfaces, value types and errors (decisions.md 2, 5, 6, 8): everything
// the server and the admin CLI persist, as plain objects (ids are UUID strings, times
// Unix ms). Routes and services see only these; an engine (SQLite in ./sqlite/,
// PostgreSQL in ./postgres/) implements them, and test/store/contract.ts holds every engine
// to the same behaviour.
//
// The rule for concurrent writes, for every engine: each method is one transaction, all
// or nothing; quota checks and charges for one user or organisation are serialised
// inside the writing transaction (SQLite: its single writer; another engine: a row or
// advisory lock on the user's and the organisation's rows, taken before counting), so
// concurrent signs never overshoot a limit; read-then-write methods (revocation,
// challenge consumption, agent linking) decide on what they read in that transaction.
import type { SignatureRecord } from 'provenant';

// ---------------------------------------------------------------- errors

/**
 * A unique value already taken. `what` names it: 'email', 'username', 'agent_key' (held
 * by another user), 'cell' (the user has one), 'action_hash' (the record is stored),
 * 'org', 'app', 'personal_org'.
 */
export class StoreConflictError extends Error {
  constructor(
    readonly what: string,
    message = `${what} is already taken`,
  ) {
    super(message);
    this.name = 'StoreConflictError';
  }
}

/** A write refers to a row that does not exist. `what` names it: 'user', 'org'. */
export class StoreNotFoundError extends Error {
  constructor(
    readonly what: string,
    message = `no such ${what}`,
  ) {
    super(message);
    this.name = 'StoreNotFoundError';
  }
}

/**
 * The engine cannot be reached (PostgreSQL down, a connection lost or timed out): the
 * request that needed it fails with 503 and may be retried; the node stays up and
 * recovers when the engine is back.
 */
export class StoreUnavailableError extends Error {
  constructor(message = 'the database is unavailable', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

// ---------------------------------------------------------------- accounts

export const USER_TIERS = ['free', 'premium', 'premium_plus'] as const;
export const ORG_TIERS = ['free', 'starter', 'pro', 'enterprise'] as const;
export const PUBLIC_FIELDS = ['display_name', 'username', 'profile_picture'] as const;

export type UserTier = (typeof USER_TIERS)[number];
export type OrgTier = (typeof ORG_TIERS)[number];
export type PublicField = (typeof PUBLIC_FIELDS)[number];

export interface User {
  id: string;
  email: string | null;
  username: string | null;
  /** `scrypt$N$r$p$salt$hash`; null for device-hosted accounts. */
  passwordHash: string | null;
  displayName: string | null;
  profilePicture: string | null;
  /** The fields the user lets public responses show (decisions.md 5). */
  publicFields: PublicField[];
  contactOptIn: boolean;
  tier: UserTier;
  emailVerified: boolean;
  createdAt: number;
  /**
   * Session tokens issued before this time (Unix ms) are void: set by "sign out
   * everywhere" and a password change (issue 25); null when never set.
   */
  sessionsValidAfter: number | null;
}

export interface NewUser {
  id: string;
  email?: string | null;
  username?: string | null;
  passwordHash?: string | null;
  displayName?: string | null;
  tier?: UserTier;
  createdAt: number;
}

export interface UserPatch {
  displayName?: string | null;
  username?: string | null;
  profilePicture?: string | null;
  publicFields?: PublicField[];
  contactOptIn?: boolean;
}

export interface Agent {
  agentKey: string;
  userId: string;
  /** Never true for an unlinked key. */
  primary: boolean;
  createdAt: number;
  /**
   * When the user unlinked the key (Unix ms), null while linked. An unlinked key stays
   * the user's (its records keep their signer's profile; no other account can take it)
   * but can no longer sign in, publish or be shown as the user's key.
   */
  unlinkedAt: number | null;
}

/** What unlinkAgent did: or why not (the key is not the user's linked key; the only one left; its server-hosted cell's). */
export type UnlinkOutcome = 'unlinked' | 'not_linked' | 'only_key' | 'cell_key';

export interface Cell {
  userId: string;
  agentKey: string;
  /** AES-256-GCM ciphertext of the PKCS#8 private key, the 16-byte tag appended. */
  ciphertext: Uint8Array;
  nonce: Uint8Array;
  createdAt: number;
}

export interface Org {
  id: string;
  name: string;
  ownerId: string;
  personal: boolean;
  tier: OrgTier;
  /** Included signs per month for `enterprise` (custom); null = unlimited / tier default. */
  customLimit: number | null;
  createdAt: number;
}

export interface App {
  /** The OAuth `client_id` and the webhook API's `app_id`. */
  id: string;
  orgId: string | null;
  ownerId: string;
  name: string;
  redirectUris: string[];
  scopes: string[];
  active: boolean;
  createdAt: number;
}

export interface AccountsStore {
  /**
   * A user, their personal organization and (optionally) their first agent key, atomically.
   * StoreConflictError 'email', 'username' or 'agent_key' when one is taken.
   */
  createAccount(input: { user: NewUser; personalOrg: { id: string; name: string }; agentKey?: string }): Promise<User>;
  getUser(id: string): Promise<User | null>;
  findUserByEmail(email: string): Promise<User | null>;
  /** By e-mail or username (both case-insensitive). */
  findUserByLogin(emailOrUsername: string): Promise<User | null>;
  /** The owner of a (canonical `uhCAk...`) agent key. */
  findUserByAgentKey(agentKey: string): Promise<User | null>;
  /**
   * Null when no such user; StoreConflictError('username') when the username is taken.
   * A change to a field public answers can show (display name, username, picture, public
   * fields) appends a 'profile' change. A changed display name writes
   * `user.profile.updated` to the outbox, in the same transaction, for every app holding
   * an unrevoked, unexpired refresh token of the user (spec 6).
   */
  updateUser(id: string, patch: UserPatch): Promise<User | null>;
  setUserTier(id: string, tier: UserTier): Promise<boolean>;
  /**
   * Voids the user's session tokens issued before `before` (Unix ms): the cut-off only
   * moves forward (a later call with an earlier time changes nothing). False when no such user.
   */
  revokeSessions(userId: string, before: number): Promise<boolean>;
  /** A new password hash, and the sessions cut-off moved to `sessionsBefore`, in one transaction. False when no such user. */
  setPassword(userId: string, passwordHash: string, sessionsBefore: number): Promise<boolean>;

  getAgent(agentKey: string): Promise<Agent | null>;
  /** Every key the user holds, unlinked ones too (their `unlinkedAt` set): primary first, then by link time. */
  listAgents(userId: string): Promise<Agent[]>;
  /**
   * Links an agent key to a user (idempotent for the same user; a key the same user
   * unlinked is linked again, its createdAt the new link time); StoreConflictError ('agent_key') when another user holds
   * it, linked or not, StoreNotFoundError('user') when the user does not exist.
   * `primary` moves the primary flag to this key; a user's first linked key is always
   * primary. Linking a key that already signed stored records changes whose profile
   * their answers show: it appends a 'profile' change.
   */
  linkAgent(userId: string, agentKey: string, opts?: { primary?: boolean; now?: number }): Promise<Agent>;
  /**
   * Unlinks one of the user's linked keys at `now`, keeping its row (the records it
   * signed keep their signer). Refused: 'only_key' for the user's last linked key,
   * 'cell_key' for the key of their server-hosted cell; 'not_linked' when the key is
   * not a linked key of this user. The primary flag moves to the oldest key left.
   * Serialised per user, so two unlinks at once cannot leave none.
   */
  unlinkAgent(userId: string, agentKey: string, now: number): Promise<UnlinkOutcome>;

  /**
   * Stores a cell and links its agent key to the user as primary, atomically.
   * StoreConflictError 'cell' (the user has one) or 'agent_key'; StoreNotFoundError('user').
   */
  createCell(cell: Omit<Cell, 'createdAt'> & { createdAt?: number }): Promise<Cell>;
  getCell(userId: string): Promise<Cell | null>;

  /** StoreConflictError 'org' (the id) or 'personal_org' (the owner has one); StoreNotFoundError('user'). */
  createOrg(org: Omit<Org, 'createdAt' | 'personal'> & { personal?: boolean; createdAt?: number }): Promise<Org>;
  getOrg(id: string): Promise<Org | null>;
  listOrgs(ownerId: string): Promise<Org[]>;
  personalOrg(userId: string): Promise<Org | null>;
  setOrgTier(id: string, tier: OrgTier, customLimit?: number | null): Promise<boolean>;

  /** StoreConflictError('app') when the id is taken; StoreNotFoundError 'user' or 'org'. */
  createApp(app: Omit<App, 'createdAt' | 'active'> & { active?: boolean; createdAt?: number }): Promise<App>;
  getApp(id: string): Promise<App | null>;
  listApps(ownerId: string): Promise<App[]>;

  /** Stores a challenge by its hash, for `agentKey`, until `expiresAt` (ms). Purges expired ones. */
  createChallenge(challenge: { hash: string; agentKey: string; expiresAt: number }): Promise<void>;
  /** Marks the challenge used if it exists, was issued to `agentKey`, is unused and unexpired; true if so. */
  consumeChallenge(hash: string, agentKey: string, now: number): Promise<boolean>;
}

// ---------------------------------------------------------------- signatures

/** The quota a sign is charged to: the user's own, or an organisation's (spec 2.5 "pool"). */
export type QuotaSource = 'personal' | 'org';
export type SignatureSource = 'rest' | 'vault';

export interface Revocation {
  reason: string | null;
  revoked_at: number;
  /** The agent key that signed the revocation (the record's signer). */
  signer: string;
  /** base64 Ed25519 over canonicalRevocationBytes({action_hash, reason, revoked_at, signer}). */
  signature: string;
}

/** The signer's profile as stored, for the public fields of spec 2.1 (gated by public_fields). */
export interface SignerProfile {
  display_name: string | null;
  username: string | null;
  profile_picture: string | null;
  public_fields: string[];
}

export interface StoredSignature {
  seq: number;
  action_hash: string;
  record: SignatureRecord;
  signature: string;
  user_id: string;
  app_id: string | null;
  source: SignatureSource;
  published_at: number;
  quota: QuotaSource;
  org_id: string | null;
  overage: boolean;
  revocation: Revocation | null;
  thumbnail: string | null;
  /** The profile of the account that holds the signer's key now (or made the record). */
  profile: SignerProfile | null;
}

/** A signed record ready to store. */
export interface NewSignature {
  record: SignatureRecord;
  signature: string;
  action_hash: string;
  userId: string;
  appId: string | null;
  source: SignatureSource;
}

/** Signs counted in the period, read inside the insert transaction. */
export interface QuotaUsage {
  /** Signs charged to the user's personal quota. */
  personalUsed: number;
  /** Signs charged to the org's quota (null when no org is involved). */
  orgUsed: number | null;
  /** Of those, signs beyond the org's included amount. */
  orgOverage: number | null;
}

/** Where a write is charged: the quota and, per record, whether it is overage. */
export interface ChargeDecision {
  quota: QuotaSource;
  orgId: string | null;
  /** One flag per record, in order; true = beyond a paid org tier's included signs. */
  overage: boolean[];
}

export interface Charge {
  /** Whose personal quota is counted. */
  userId: string;
  /** The sponsoring org, if any. */
  orgId: string | null;
  /** The quota period: [start, end) in Unix ms. */
  periodStart: number;
  periodEnd: number;
  /** Turns the counts into a charge; throws to refuse (nothing is written then). */
  decide(usage: QuotaUsage, requested: number): ChargeDecision;
}

/** A row for the webhook dispatcher (decisions.md 8), written with its cause. */
export interface OutboxEvent {
  appId: string;
  type: string;
  /** The event-specific fields of spec 6 (the dispatcher adds `event` and `timestamp`). */
  payload: Record<string, unknown>;
}

export interface NewRevocation extends Revocation {
  action_hash: string;
  source: SignatureSource;
  appId: string | null;
}

/** A fingerprinted record, for the perceptual match index (the matching issue). */
export interface FingerprintedSignature {
  seq: number;
  action_hash: string;
  record: SignatureRecord;
  revoked: boolean;
}

export interface SignaturesStore {
  /**
   * In one transaction, all or nothing: takes the quota lock of `charge.userId` and
   * `charge.orgId` (see the rule at the top of this file), counts the period's usage,
   * lets `charge.decide` choose the quota (or refuse by throwing), inserts every record,
   * the outbox rows and one 'stored' change per record. Returns the decision.
   * StoreConflictError('action_hash') when a record is already stored;
   * StoreNotFoundError('user') when a row's user does not exist.
   */
  insertSignatures(rows: readonly NewSignature[], charge: Charge, events?: readonly OutboxEvent[]): Promise<ChargeDecision>;
  /** Usage of the period, read outside any transaction (for quota displays; signing recounts inside its own). */
  countUsage(userId: string, orgId: string | null, periodStart: number, periodEnd: number): Promise<QuotaUsage>;
  get(actionHash: string): Promise<StoredSignature | undefined>;
  /** Every record of a file, oldest first, with revocation and signer profile. */
  findByFileHash(fileHash: string): Promise<StoredSignature[]>;
  /** Records of the given signers, oldest first. */
  findBySigners(agentKeys: readonly string[]): Promise<StoredSignature[]>;
  /** Records made by the user or signed by any agent key linked to the user, newest first. */
  findForUser(userId: string): Promise<StoredSignature[]>;
  /**
   * Stores a revocation, its outbox rows and a 'revoked' change in one transaction.
   * 'unknown' when no such record exists, 'already_revoked' when it has one.
   */
  insertRevocation(revocation: NewRevocation, events?: readonly OutboxEvent[]): Promise<'revoked' | 'unknown' | 'already_revoked'>;
  /** Sets (or replaces) the thumbnail of a record, with a 'thumbnail' change. False when the record is unknown. */
  setThumbnail(actionHash: string, dataUri: string, now: number): Promise<boolean>;
  /** Fingerprinted records after `afterSeq` in insertion order: the match index's initial load. */
  listFingerprinted(afterSeq: number, limit: number): Promise<FingerprintedSignature[]>;
  /**
   * The reduced shape's stored fields of the fingerprinted records with these seqs (the
   * match index's ids) as JSON object text (`reducedJson`, written when the record was
   * stored); in no particular order; unknown seqs and records without a fingerprint are
   * skipped.
   */
  reducedBySeqs(seqs: readonly number[]): Promise<{ seq: number; signed_at: number; json: string }[]>;
  /**
   * Perceptual hashes (JSON text, parsed by whoever indexes them; null for a record the
   * engine cannot read) and signed_at of the fingerprinted records with
   * `afterSeq < seq <= upToSeq`, in seq order: the match index's lean load, in ranges
   * that can be read concurrently.
   */
  listPerceptualHashes(afterSeq: number, upToSeq: number): Promise<{ seq: number; signed_at: number; perceptual_hash_json: string | null }[]>;
  /** The highest record seq stored so far (0 when there is none). */
  lastSeq(): Promise<number>;
  /** Undelivered outbox rows, oldest first (for the webhook dispatcher). */
  pendingEvents(limit: number): Promise<{ id: number; app_id: string; type: string; payload: Record<string, unknown>; created_at: number }[]>;
  markEventDispatched(id: number, now: number): Promise<void>;
}

// ---------------------------------------------------------------- the change feed

/** A write that changes a verification answer, numbered in commit order. */
export type Change =
  | { seq: number; kind: 'stored'; file_hash: string; action_hash: string; signature_seq: number; has_fingerprint: boolean; at: number }
  | { seq: number; kind: 'revoked'; file_hash: string; action_hash: string; at: number }
  | { seq: number; kind: 'thumbnail'; file_hash: string; action_hash: string; at: number }
  /** A signer's public profile changed (answers show profile fields): any answer with their records. */
  | { seq: number; kind: 'profile'; user_id: string; at: number };

/** How much of the change feed is kept (PROVENANT_FEED_MAX_CHANGES, PROVENANT_FEED_MAX_AGE_HOURS). */
export interface FeedWindow {
  maxChanges: number;
  maxAgeMs: number;
}

/**
 * Every engine's log of the writes that change verification answers: each change is
 * appended in the transaction of its cause (a rolled-back write appends nothing), and
 * numbered so that a reader holding a seq has seen every change committed up to it.
 * Consumers (the verify cache, the answer cache, the match index) keep a cursor.
 */
export interface ChangeFeed {
  /** The seq of the latest committed change (0 when none), pruned ones included: never below horizon(). */
  latest(): Promise<number>;
  /**
   * Committed changes with seq > afterSeq, oldest first, at most `limit`: those still in
   * the window. Changes up to horizon() were pruned: a reader whose cursor is below it
   * missed some (see horizon()).
   */
  since(afterSeq: number, limit: number): Promise<Change[]>;
  /**
   * The highest seq pruned from the feed (0 when none). Pruning removes changes from the
   * oldest, so a reader at `cursor` has missed changes exactly when horizon() > cursor.
   * Read it AFTER the since() it checks (the horizon only grows): then a horizon not
   * above the cursor proves that since() saw every change after it. A since() whose first
   * change is cursor + 1 proves it alone.
   */
  horizon(): Promise<number>;
  /**
   * Deletes the oldest changes outside the window: beyond the newest `maxChanges`, or
   * written (`at`) before `now - maxAgeMs`; raises horizon() to the highest seq deleted,
   * in the same transaction. In batches (each its own transaction, so appends are never
   * held up long); several nodes pruning at once is harmless. Returns the changes deleted.
   */
  prune(window: FeedWindow, now: number): Promise<number>;
  /**
   * Wakes `listener` after a commit on this node appended changes (no payload: read
   * since() from your own cursor). Called synchronously once the commit is done and
   * before the writing call resolves, so a consumer that must not answer from before a
   * write its caller has seen (read your writes) marks itself stale here, then catches
   * up with since(). Writes by other processes wake nobody here: see onRemote.
   * Returns unsubscribe.
   */
  onAppend(listener: () => void): () => void;
  /**
   * Wakes `listener` when another node may have appended changes: on PostgreSQL a
   * notification from its commit, and every time the notification connection is
   * (re)established, since changes may have been committed while it was down. No
   * payload and no ordering promise: read since() from your own cursor. An engine one
   * process owns (SQLite) never calls it. Returns unsubscribe.
   */
  onRemote(listener: () => void): () => void;
}

// ---------------------------------------------------------------- the contact relay

/**
 * A request to the blind contact relay (spec 4.13), queued as received (fields already
 * checked and made header-safe); who the signer is, whether they opted in and their
 * address are decided when the queue is drained, never on the request path.
 */
export interface NewContactRequest {
  /** Canonical `uhCAk...` agent key. */
  signerAgentKey: string;
  /** Lowercase hex; null for a profile contact. */
  fileHash: string | null;
  senderName: string;
  senderEmail: string;
  message: string;
  purpose: 'licensing' | 'ai_training' | 'collaboration' | 'other';
  createdAt: number;
}

export interface QueuedContactRequest extends NewContactRequest {
  id: number;
  /** Delivery attempts that failed so far. */
  attempts: number;
}

export interface ContactStore {
  /** Queues a request durably (committed when this resolves). */
  enqueue(request: NewContactRequest): Promise<void>;
  /**
   * Up to `limit` requests due at `now` (oldest first), each leased until `leaseUntil`:
   * a second claim before then does not return it, so two drainers never work on the
   * same request; a lease that runs out (a crashed drainer) makes it due again.
   */
  claimDue(now: number, leaseUntil: number, limit: number): Promise<QueuedContactRequest[]>;
  /** Removes a request that was delivered or dropped (the relay keeps no copy). */
  complete(id: number): Promise<void>;
  /** Counts a failed attempt and makes the request due again at `retryAt`. */
  retryLater(id: number, retryAt: number, error: string): Promise<void>;
  /** Requests waiting (for /healthz). */
  pending(): Promise<number>;
}

// ---------------------------------------------------------------- e-mail address verification

/** A verification link as stored: only its token's SHA-256 (hex), bound to the address it was sent to. */
export interface NewEmailVerification {
  hash: string;
  userId: string;
  /** The address the link was sent to (lowercase, as the user row holds it). */
  email: string;
  createdAt: number;
  expiresAt: number;
}

/** How using a verification link ended (consume). */
export type EmailVerificationOutcome =
  /** The address is verified now (the link is used up). */
  | { outcome: 'verified'; userId: string; email: string }
  /** No link with this hash (never sent, mistyped, or purged long after it expired). */
  | { outcome: 'unknown' }
  | { outcome: 'used' }
  | { outcome: 'expired' }
  /** The account's address is no longer the one the link was sent to (or the account is gone). */
  | { outcome: 'stale' };

export interface EmailVerificationStore {
  /**
   * Stores a link and drops the user's links that expired before `purgeBefore`, in one
   * transaction (a used or expired link is kept a while so that it is told apart from an
   * unknown one). StoreNotFoundError 'user'.
   */
  create(verification: NewEmailVerification, purgeBefore: number): Promise<void>;
  /**
   * Uses a link up in one transaction: unknown, used, expired (at `now`), stale; or
   * marks it used and the user's address verified. Of concurrent uses exactly one verifies.
   */
  consume(hash: string, now: number): Promise<EmailVerificationOutcome>;
}

// ---------------------------------------------------------------- webhooks

/** Spec 2.7 filters: only `file_hash` (lowercase hex), applied to `sign.created`. */
export interface WebhookFilters {
  file_hash?: string;
}

/** A webhook as stored (spec 2.7, 3.2). */
export interface Webhook {
  id: string;
  appId: string;
  /** The organization its count is charged to (the app's, or its owner's personal one). */
  orgId: string;
  url: string;
  events: string[];
  filters: WebhookFilters;
  /** The signing secret as the domain sealed it (the store does not read it). */
  sealedSecret: string;
  active: boolean;
  /** When it last became active (its creation, or the PUT that re-enabled it): events from before are not its. */
  activeSince: number;
  /** Consecutive failed deliveries (spec 3.2). */
  failureCount: number;
  lastTriggeredAt: number | null;
  /** Kept, never returned (spec 2.7). */
  lastFailureAt: number | null;
  createdAt: number;
}

export type NewWebhook = Omit<Webhook, 'active' | 'activeSince' | 'failureCount' | 'lastTriggeredAt' | 'lastFailureAt'>;

/** A PUT (spec 4.15): `active: true` also resets the failure count; a change of `active` drops its pending deliveries. */
export interface WebhookPatch {
  url?: string;
  events?: string[];
  filters?: WebhookFilters;
  active?: boolean;
}

/** An outbox row as the dispatcher routes it. */
export interface QueuedEvent {
  id: number;
  appId: string;
  type: string;
  payload: Record<string, unknown>;
  createdAt: number;
}

/** One event for one webhook, claimed for sending. */
export interface WebhookDelivery {
  /** A UUID, the X-Service-Delivery header: the same on every attempt of this event to this webhook. */
  id: string;
  webhookId: string;
  url: string;
  sealedSecret: string;
  event: QueuedEvent;
  /** Claims so far, this one included (above 1: a dispatcher died while sending it). */
  attempts: number;
}

export interface WebhooksStore {
  /**
   * In one transaction: counts the webhooks of `webhook.orgId` (across its apps) and
   * stores the webhook unless that count has reached `limit` (null: unlimited), so
   * concurrent creates never pass the limit.
   */
  create(webhook: NewWebhook, limit: number | null): Promise<Webhook | 'limit_reached'>;
  get(id: string): Promise<Webhook | null>;
  /** Oldest first. */
  listForApp(appId: string): Promise<Webhook[]>;
  /** Null when no such webhook. Re-enabling an inactive one makes `now` its activeSince. */
  update(id: string, patch: WebhookPatch, now: number): Promise<Webhook | null>;
  /** Removes the webhook and its pending deliveries; false when no such webhook. */
  delete(id: string): Promise<boolean>;
  /**
   * In one transaction: takes up to `limit` undelivered outbox rows, oldest first (rows
   * another dispatcher is routing are skipped, never waited for), asks `route` which of
   * the app's active webhooks each goes to, queues one delivery per chosen webhook and
   * marks the row dispatched at `now`. Returns the number of rows routed.
   */
  routeEvents(limit: number, now: number, route: (event: QueuedEvent, webhooks: readonly Webhook[]) => readonly Webhook[]): Promise<number>;
  /**
   * Up to `limit` deliveries due at `now`, each leased until `leaseUntil`: per webhook
   * only its oldest unfinished delivery, and only while its webhook is active, so a
   * webhook gets one request at a time, in event order. A lease that runs out (a
   * dispatcher died) makes the delivery due again, with the same id.
   */
  claimDeliveries(now: number, leaseUntil: number, limit: number): Promise<WebhookDelivery[]>;
  /**
   * Records the outcome (spec 3.2): 2xx resets the failure count and sets
   * last_triggered_at; a failure counts, and the `maxFailures`th consecutive one makes
   * the webhook inactive and drops its pending deliveries. 'gone' when the delivery or
   * its webhook was deleted meanwhile, and, with `claim` (WebhookDelivery.attempts),
   * when another claim has taken the delivery since (nothing is recorded then).
   */
  finishDelivery(id: string, outcome: { ok: boolean; at: number }, maxFailures: number, claim?: number): Promise<'delivered' | 'failed' | 'disabled' | 'gone'>;
  /**
   * Extends the lease of a delivery being sent to `leaseUntil`, if `claim` (its
   * WebhookDelivery.attempts: each claim numbers it) is still the current claim and the
   * delivery is unfinished: true then. False when another claim took it (the lease ran
   * out and someone claimed it again) or it was finished or deleted: the sender must not
   * send (or record) it. A claim that took it waits for a lease renewed meanwhile.
   */
  renewDelivery(id: string, claim: number, leaseUntil: number): Promise<boolean>;
  /** Outbox rows not yet routed and deliveries not yet finished (for /healthz). */
  backlog(): Promise<{ events: number; deliveries: number }>;
}

// ---------------------------------------------------------------- OAuth 2.0 (spec 2.8, 3.4; decisions.md 7)

/**
 * A user's consent to an app: the scopes granted so far (a union over consents) and,
 * with `email`, the verified address the user shared (spec 2.8; deleted with the grant).
 * Codes and tokens hang off a grant; deleting it (the user revokes the app) ends them.
 */
export interface OAuthGrant {
  id: string;
  userId: string;
  appId: string;
  scopes: string[];
  sharedEmail: string | null;
  createdAt: number;
  updatedAt: number;
}

/** A grant as the user's list of apps shows it. */
export interface OAuthGrantListing extends OAuthGrant {
  appName: string;
}

/** An authorization code to store: only its SHA-256 (hex) is kept. */
export interface NewOAuthCode {
  hash: string;
  redirectUri: string;
  scopes: string[];
  /** BASE64URL(SHA-256(verifier)) (RFC 7636 S256). */
  codeChallenge: string;
  expiresAt: number;
}

export interface StoredOAuthCode extends NewOAuthCode {
  grantId: string;
  userId: string;
  appId: string;
  createdAt: number;
}

/** A token to store: only its SHA-256 (hex) is kept. */
export interface NewOAuthToken {
  hash: string;
  expiresAt: number;
}

export interface StoredRefreshToken {
  hash: string;
  grantId: string;
  userId: string;
  appId: string;
  scopes: string[];
  expiresAt: number;
  revokedAt: number | null;
}

/** What a valid access token stands for. */
export interface OAuthAccess {
  userId: string;
  appId: string;
  scopes: string[];
  grantId: string;
  expiresAt: number;
}

/** How a code redemption ended (redeemCode). */
export type CodeRedemption =
  | { outcome: 'issued'; code: StoredOAuthCode }
  /** No code with this hash. */
  | { outcome: 'unknown' }
  /** Used before: every token issued from it was revoked now (RFC 6749 4.1.2, RFC 9700 4.5). */
  | { outcome: 'replayed'; code: StoredOAuthCode }
  /** `decide` refused it (the code is used up all the same). */
  | { outcome: 'refused'; code: StoredOAuthCode; problem: string };

export interface OAuthStore {
  getGrant(userId: string, appId: string): Promise<OAuthGrant | null>;
  /**
   * The user's consent, in one transaction: creates the grant or adds `scopes` to its
   * own, sets the shared e-mail when `sharedEmail` is given (a string, or null to drop
   * it), stores `code` under it and writes `events` (oauth.authorized) to the outbox.
   * StoreNotFoundError 'user' or 'app'.
   */
  consent(input: { grantId: string; userId: string; appId: string; scopes: string[]; sharedEmail?: string | null; code: NewOAuthCode; events: readonly OutboxEvent[]; now: number }): Promise<OAuthGrant>;
  /** Stores a code under an existing grant (scopes granted before: no consent, no event); false when the grant is gone. */
  createCode(grantId: string, code: NewOAuthCode, now: number): Promise<boolean>;
  /**
   * Redeems a code in one transaction: unknown; used before (replayed: then deletes
   * every refresh and access token issued from it); otherwise marks it used, asks
   * `decide` (a problem string refuses, the code stays used) and stores `tokens`
   * (the refresh token remembers the code, the access token its refresh token).
   */
  redeemCode(codeHash: string, now: number, decide: (code: StoredOAuthCode) => string | null, tokens: { access: NewOAuthToken; refresh: NewOAuthToken }): Promise<CodeRedemption>;
  getRefreshToken(hash: string): Promise<StoredRefreshToken | null>;
  /** Stores an access token issued from a refresh token (scopes already narrowed); false when the refresh token is gone or revoked. */
  addAccessToken(refreshHash: string, access: NewOAuthToken & { scopes: string[] }, now: number): Promise<boolean>;
  /** The unexpired access token with this hash, whose grant and app still stand (an inactive app's tokens are void). */
  findAccessToken(hash: string, now: number): Promise<OAuthAccess | null>;
  /**
   * Revokes the refresh token if it is `appId`'s and not revoked yet, deletes the access
   * tokens issued from it and writes `events(token)` to the outbox, in one transaction.
   * False (nothing written) otherwise.
   */
  revokeRefreshToken(hash: string, appId: string, now: number, events: (token: StoredRefreshToken) => readonly OutboxEvent[]): Promise<boolean>;
  /** The user's grants, oldest first. */
  listGrants(userId: string): Promise<OAuthGrantListing[]>;
  /** Deletes the grant (its shared e-mail, codes and tokens with it); false when there is none. */
  deleteGrant(userId: string, appId: string): Promise<boolean>;
}

export interface Store {
  /** Which engine holds the data (for /healthz). */
  readonly engine: 'sqlite' | 'postgres';
  accounts: AccountsStore;
  signatures: SignaturesStore;
  contacts: ContactStore;
  emailVerifications: EmailVerificationStore;
  webhooks: WebhooksStore;
  oauth: OAuthStore;
  feed: ChangeFeed;
  /**
   * Records `fingerprint` (of the node's secrets; never the secrets) unless one is
   * recorded already, and returns the recorded one: nodes sharing a database compare it
   * with their own at start. SQLite keeps its secrets beside its one file and records
   * nothing: it returns `fingerprint`.
   */
  recordSecretsFingerprint(fingerprint: string): Promise<string>;
  /**
   * Cheap liveness check of the engine (for /healthz): throws when it cannot answer;
   * `degraded` says what works less well meanwhile (PostgreSQL: other nodes' changes are
   * not heard of until the notification connection is back).
   */
  ping(): Promise<{ degraded?: string }>;
  /** Waits for queued writes, then closes. */
  close(): Promise<void>;
}
