// The webhook dispatcher (spec 6, 3.2; decisions.md 8): a long-lived part, built and
// closed by the composition root, that routes outbox rows to the webhooks they are for
// and sends each delivery once. Woken by every commit that appends a change (signs and
// revocations write their events in that transaction), by another node's (PostgreSQL)
// and by a poll (events of writes that append no change, such as OAuth's); claims are
// leased in the store, so several nodes share the work and a node that dies leaves its
// deliveries to another once the lease runs out. A sender renews its lease while its
// delivery is in flight and confirms its claim before it writes the request, so a node
// that stalls past its lease sends nothing another claim is sending (docs/webhooks.md).
import { setMaxListeners } from 'node:events';
import { hmacSha256Hex } from 'provenant';
import type { Config } from '../config.js';
import type { Secrets } from '../secrets.js';
import { MAX_CONSECUTIVE_FAILURES, openSecret, routeEvent } from '../domain/webhooks.js';
import type { Logger } from '../log.js';
import type { Store, WebhookDelivery } from '../store/index.js';
import type { SecureContext } from 'node:tls';
import { ClaimLostError, deliverWebhook, trustingExtraCa, WEBHOOK_DEADLINE_MS, type DeliveryOutcome } from './deliver.js';
import { createHostResolver, type HostResolver } from '../domain/url-rules.js';

/** How often the outbox is looked at without a wake. */
const POLL_MS = 1_000;
/** Deliveries in flight at once (each webhook has at most one: the store's claim rule). */
const CONCURRENCY = 16;
/** Outbox rows routed per transaction. */
const ROUTE_BATCH = 100;
/**
 * A claim holds a delivery this long from its claim or last renewal (renewed every third
 * of it while in flight): the deadline and a margin, so that a node that dies leaves its
 * deliveries to another within seconds.
 */
const LEASE_MS = WEBHOOK_DEADLINE_MS + 5_000;
/** Renewals tried to confirm a claim before writing, when each took half the lease or more. */
const CONFIRM_TRIES = 3;

export interface DispatcherDeps {
  store: Store;
  /** cell.key opens the webhooks' sealed secrets. */
  secrets: Secrets;
  config: Pick<Config, 'dnsServers' | 'webhookAllowPrivate'>;
  log: Logger;
  /** Extra CA certificates (PEM) for receivers (tests: their own CA, in process); NODE_EXTRA_CA_CERTS works too. */
  extraCa?: string;
  /** How long a claim holds a delivery before it must be renewed (default LEASE_MS; tests make it short). */
  leaseMs?: number;
}

export class WebhookDispatcher {
  /** Resolves webhook hosts (PROVENANT_DNS_SERVERS or the system's resolver), for deliveries and registrations alike. */
  readonly resolveHost: HostResolver;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly closing = new AbortController();
  private readonly secureContext: SecureContext | undefined;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void)[] = [];
  private passing: Promise<void> | undefined;
  private again = false;
  /**
   * Since start: deliveries answered 2xx, failed, webhooks disabled by their 10th failure
   * in a row, and claims found lost (not sent, or sent but left to the current claim).
   */
  readonly counts = { delivered: 0, failed: 0, disabled: 0, superseded: 0 };

  private readonly leaseMs: number;

  constructor(private readonly deps: DispatcherDeps) {
    this.leaseMs = deps.leaseMs ?? LEASE_MS;
    this.resolveHost = createHostResolver(deps.config.dnsServers);
    this.secureContext = deps.extraCa === undefined ? undefined : trustingExtraCa(deps.extraCa);
    // each delivery in flight listens for the close
    setMaxListeners(CONCURRENCY + 1, this.closing.signal);
  }

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /** Starts following commits and polling, and sends what a previous run left undelivered. */
  start(): void {
    // this node's commits, and (PostgreSQL) another node's: either may have written events
    this.unsubscribe = [this.deps.store.feed.onAppend(() => this.wake()), this.deps.store.feed.onRemote(() => this.wake())];
    this.timer = setInterval(() => this.wake(), POLL_MS);
    this.timer.unref();
    this.wake();
  }

  /** Runs a pass soon, off the caller's path; a wake during a pass runs one more. */
  wake(): void {
    if (this.closing.signal.aborted) return;
    if (this.passing) {
      this.again = true;
      return;
    }
    this.passing = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.pass())
      .catch((err: Error) => this.deps.log.error('webhooks: dispatching failed', { error: err.message }))
      .finally(() => {
        this.passing = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Resolves once nothing is being routed or sent (tests, benches). */
  async idle(): Promise<void> {
    while (this.passing || this.inFlight.size > 0) await Promise.all([this.passing, ...this.inFlight]);
  }

  /** Routes the outbox, then claims as many deliveries as there are free slots. */
  private async pass(): Promise<void> {
    const { store } = this.deps;
    for (;;) {
      if (this.closing.signal.aborted) return;
      const now = Date.now();
      const routed = await store.webhooks.routeEvents(ROUTE_BATCH, now, routeEvent);
      const free = CONCURRENCY - this.inFlight.size;
      // the lease runs from the claim, not from the pass's start: routing under load can take
      // seconds, and a lease cut short lets another node claim a delivery still in flight here
      const claimedAt = Date.now();
      const claimed = free > 0 ? await store.webhooks.claimDeliveries(claimedAt, claimedAt + this.leaseMs, free) : [];
      for (const delivery of claimed) {
        const sending: Promise<void> = this.send(delivery)
          .catch((err: Error) => this.deps.log.error('webhooks: recording a delivery failed', { delivery: delivery.id, error: err.message }))
          .finally(() => {
            this.inFlight.delete(sending);
            this.wake(); // the webhook's next delivery, or a freed slot
          });
        this.inFlight.add(sending);
      }
      if (routed < ROUTE_BATCH && claimed.length < free) return;
      if (free <= 0) return;
    }
  }

  /**
   * The envelope of spec 6 (`{event, timestamp, ...fields}`), signed, sent, its outcome
   * recorded, under a claim kept current: the lease is renewed every third of its length
   * until the outcome is recorded, and confirmed (renewed) once the connection is up,
   * before a byte is written. A renewal the store refuses means another claim took the
   * delivery (this node stalled past its lease): the request is aborted or never
   * written, and nothing is recorded.
   */
  private async send(delivery: WebhookDelivery): Promise<void> {
    const { store, config, log } = this.deps;
    const { event } = delivery;
    // aborted when the dispatcher closes, or (a ClaimLostError) when a renewal is refused
    const claim = new AbortController();
    const onClose = () => claim.abort(this.closing.signal.reason);
    this.closing.signal.addEventListener('abort', onClose, { once: true });
    let renewing: Promise<{ ok: boolean; startedAt: number }> | undefined;
    const renew = () =>
      (renewing ??= (async () => {
        const startedAt = Date.now();
        try {
          const ok = await store.webhooks.renewDelivery(delivery.id, delivery.attempts, startedAt + this.leaseMs);
          if (!ok && !claim.signal.aborted) claim.abort(new ClaimLostError());
          return { ok, startedAt };
        } finally {
          renewing = undefined;
        }
      })());
    // the lease runs from a renewal's start: enough of it must be left for the write that
    // follows at once (a renewal that took half the lease is tried again, a few times)
    const confirm = async (): Promise<boolean> => {
      for (let tries = 0; tries < CONFIRM_TRIES && !claim.signal.aborted; tries++) {
        const { ok, startedAt } = await renew();
        if (!ok) return false;
        if (Date.now() - startedAt < this.leaseMs / 2) return true;
      }
      return false;
    };
    const timer = setInterval(() => {
      renew().catch((err: Error) => log.warn('webhooks: renewing a lease failed', { delivery: delivery.id, error: err.message }));
    }, Math.max(1, Math.floor(this.leaseMs / 3)));
    timer.unref();
    try {
      const body = Buffer.from(JSON.stringify({ event: event.type, timestamp: Date.now(), ...event.payload }));
      const secret = openSecret(this.deps, delivery.webhookId, delivery.sealedSecret);
      const outcome: DeliveryOutcome = await deliverWebhook(
        {
          url: delivery.url,
          body,
          headers: {
            'content-type': 'application/json',
            'user-agent': 'Provenant-Webhooks/1',
            'x-service-event': event.type,
            'x-service-signature': hmacSha256Hex(secret, body),
            'x-service-delivery': delivery.id,
          },
        },
        { resolveHost: this.resolveHost, allowPrivate: config.webhookAllowPrivate, secureContext: this.secureContext, signal: claim.signal, beforeSend: confirm },
      );
      // closing: left leased, so the next start (or another node) sends it, with the same delivery id
      if (!outcome.ok && outcome.reason === 'aborted') return;
      // another claim has it (or will, once the lease runs out): its sender records the outcome
      if ((!outcome.ok && outcome.reason === 'superseded') || claim.signal.reason instanceof ClaimLostError) {
        this.counts.superseded += 1;
        log.warn('webhooks: claim lost (this node stalled past its lease); left to the current claim', { delivery: delivery.id, webhook: delivery.webhookId, claim: delivery.attempts });
        return;
      }
      // recorded only while the claim is current (a stalled sender's timeout must not count against the webhook)
      const result = await store.webhooks.finishDelivery(delivery.id, { ok: outcome.ok, at: Date.now() }, MAX_CONSECUTIVE_FAILURES, delivery.attempts);
      if (result === 'gone') log.debug('webhooks: delivery gone before its outcome was recorded (its webhook deleted or disabled, or claimed again)', { delivery: delivery.id, webhook: delivery.webhookId });
      if (outcome.ok) {
        this.counts.delivered += 1;
        log.debug('webhooks: delivered', { delivery: delivery.id, webhook: delivery.webhookId, event: event.type, status: outcome.status });
        return;
      }
      this.counts.failed += 1;
      log.warn('webhooks: delivery failed', { delivery: delivery.id, webhook: delivery.webhookId, event: event.type, reason: outcome.reason, error: outcome.error });
      if (result === 'disabled') {
        this.counts.disabled += 1;
        log.warn('webhooks: webhook disabled after consecutive failures', { webhook: delivery.webhookId, failures: MAX_CONSECUTIVE_FAILURES });
      }
    } finally {
      clearInterval(timer);
      this.closing.signal.removeEventListener('abort', onClose);
    }
  }

  /** Stops polling; deliveries in flight are aborted and stay leased (sent again, same id, after the lease). */
  async close(): Promise<void> {
    this.closing.abort(new Error('the server is closing'));
    clearInterval(this.timer);
    for (const unsubscribe of this.unsubscribe) unsubscribe();
    this.unsubscribe = [];
    await this.idle();
  }
}
