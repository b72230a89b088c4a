// What every feature router and service receives: the server's long-lived parts,
// built once by the composition root (root.ts) and passed down explicitly. Routers
// only route: none of them builds or starts a part.
import type { FingerprintPool } from 'provenant';
import type { Config } from './config.js';
import type { Store } from './store/index.js';
import type { Logger } from './log.js';
import type { Metrics } from './metrics.js';
import type { MatchingService } from './matching/service.js';
import type { UploadGate } from './matching/upload.js';
import type { RateLimitStores } from './ratelimit.js';
import type { VerifyCache } from './signit/cache.js';
import type { ContactRelay } from './contact/mailer.js';
import type { MailTransport } from './mail/transport.js';
import type { VerificationMailer } from './mail/verification.js';
import type { WebhookDispatcher } from './webhooks/dispatcher.js';
import type { TransparencyLog } from './tlog/types.js';
import type { AuthState } from './types.js';
import type { Parts } from './parts.js';
import type { Secrets } from './secrets.js';

/** Returns the caller a bearer token stands for, or null when the token is not of its kind or invalid (ServerDeps.tokenVerifiers). */
export type TokenVerifier = (deps: ServerDeps, token: string) => Promise<AuthState | null>;

export interface ServerDeps {
  config: Config;
  log: Logger;
  metrics: Metrics;
  store: Store;
  /** The keys in PROVENANT_SECRETS_DIR (jwt.key, cell.key, log.key), read once by the root. */
  secrets: Secrets;
  /** Fingerprints uploads off the event loop (PROVENANT_WORKERS threads). */
  pool: FingerprintPool;
  /** The perceptual match index (on its own thread) and its answer cache. */
  matching: MatchingService;
  verifyCache: VerifyCache;
  /** GET /content-rights answers (5 minutes), following the change feed as the verify cache does. */
  contentRightsCache: VerifyCache;
  /** The windows of the per-IP rate limits. */
  rateLimits: RateLimitStores;
  /** Bounds the uploads being read or fingerprinted at once. */
  uploads: UploadGate;
  /** Tried in turn on a bearer token: session tokens first. */
  tokenVerifiers: readonly TokenVerifier[];
  /** The one mail transport (SMTP or the outbox directory) the senders below share. */
  mail: MailTransport;
  /** Drains the contact relay's queue in the background (spec 4.13). */
  contactRelay: ContactRelay;
  /** Mails address-verification links off the request path. */
  verificationMail: VerificationMailer;
  /** Routes the event outbox to webhooks and delivers (spec 6); its resolver also checks registrations. */
  webhooks: WebhookDispatcher;
  /** The transparency log (issue 27): its store, key and checkpoint signer. */
  transparencyLog: TransparencyLog;
  /** Every part above, in the order built: /healthz reports them, shutdown closes them in reverse. */
  parts: Parts;
}
