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
import type { TokenVerifier } from './auth/middleware.js';
import type { ContactRelay } from './contact/mailer.js';
import type { MailTransport } from './mail/transport.js';
import type { VerificationMailer } from './mail/verification.js';
import type { WebhookDispatcher } from './webhooks/dispatcher.js';

export interface ServerDeps {
  config: Config;
  log: Logger;
  metrics: Metrics;
  store: Store;
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
  /** Every part above, in the order built: /healthz reports them, shutdown closes them in reverse. */
  parts: Parts;
}

/**
 * What /healthz shows of a part: ok, degraded (the node answers without it, e.g. rate
 * limits per node while the shared Redis is away) or error, and the part's own figures.
 */
export type PartHealth = { status: 'ok' | 'degraded' | 'error' } & Record<string, string | number | boolean | null>;

/** A long-lived part as the composition root registers it. */
export interface Part {
  /** Its key in /healthz and in the log lines of a shutdown. */
  name: string;
  health(): PartHealth | Promise<PartHealth>;
  /** Nothing to close: omitted. */
  close?(): void | Promise<void>;
}

/**
 * The one list of a server's parts: health in the order they were built, and one
 * shutdown for a stop and for a start that failed half-way, closing in reverse order
 * (what was built last may use what was built before it, never the other way).
 */
export class Parts {
  private readonly list: Part[] = [];
  private closing: Promise<void> | undefined;

  constructor(private readonly log: Logger) {}

  add(part: Part): void {
    if (this.closing) throw new Error(`part ${part.name} added to a server that is closing`);
    this.list.push(part);
    this.log.debug('part started', { part: part.name });
  }

  /** Every part's health, by name in build order; a part whose check throws is an error. */
  async health(): Promise<Record<string, PartHealth>> {
    const reports = await Promise.all(
      this.list.map(async (part): Promise<PartHealth> => {
        try {
          return await part.health();
        } catch (err) {
          const error = err instanceof Error ? err.message : String(err);
          this.log.error('health check failed', { part: part.name, error });
          return { status: 'error', error };
        }
      }),
    );
    return Object.fromEntries(this.list.map((part, i) => [part.name, reports[i]]));
  }

  /**
   * Closes every part, last built first, each once even when called again; a part
   * that fails to close is logged and the rest still close; the first failure is
   * thrown at the end.
   */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      let failure: unknown;
      for (const part of [...this.list].reverse()) {
        try {
          await part.close?.();
          this.log.debug('part closed', { part: part.name });
        } catch (err) {
          failure ??= err;
          this.log.error('closing a part failed', { part: part.name, error: err instanceof Error ? err.message : String(err) });
        }
      }
      if (failure !== undefined) throw failure;
    })());
  }
}
