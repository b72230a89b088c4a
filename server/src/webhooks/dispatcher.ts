// The webhook dispatcher (spec 6, 3.2; decisions.md 8): a long-lived part, built and
// closed by the composition root, that routes outbox rows to the webhooks they are for
// and sends each delivery once. Woken by every commit that appends a change (signs and
// revocations write their events in that transaction), by another node's (PostgreSQL)
// and by a poll (events of writes that append no change, such as OAuth's); claims are
// leased in the store, so several nodes share the work and a node that dies leaves its
// deliveries to another once the lease runs out.
import { setMaxListeners } from 'node:events';
import { hmacSha256Hex } from 'provenant';
import type { Config } from '../config.js';
import { MAX_CONSECUTIVE_FAILURES, openSecret, routeEvent } from '../domain/webhooks.js';
import type { Logger } from '../log.js';
import type { Store, WebhookDelivery } from '../store/index.js';
import type { SecureContext } from 'node:tls';
import { deliverWebhook, trustingExtraCa, WEBHOOK_DEADLINE_MS, type DeliveryOutcome } from './deliver.js';
import { createHostResolver, type HostResolver } from './url-rules.js';

/** How often the outbox is looked at without a wake. */
const POLL_MS = 1_000;
/** Deliveries in flight at once (each webhook has at most one: the store's claim rule). */
const CONCURRENCY = 16;
/** Outbox rows routed per transaction. */
const ROUTE_BATCH = 100;
/** A claimed delivery is this node's for this long: the deadline and a margin. */
const LEASE_MS = WEBHOOK_DEADLINE_MS + 5_000;

export interface DispatcherDeps {
  store: Store;
  config: Pick<Config, 'secretsDir' | 'dnsServers' | 'webhookAllowPrivate'>;
  log: Logger;
  /** Extra CA certificates (PEM) for receivers (tests: their own CA, in process); NODE_EXTRA_CA_CERTS works too. */
  extraCa?: string;
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
  /** Since start: deliveries answered 2xx, failed, and webhooks disabled by their 10th failure in a row. */
  readonly counts = { delivered: 0, failed: 0, disabled: 0 };

  constructor(private readonly deps: DispatcherDeps) {
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
      const claimed = free > 0 ? await store.webhooks.claimDeliveries(claimedAt, claimedAt + LEASE_MS, free) : [];
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

  /** The envelope of spec 6 (`{event, timestamp, ...fields}`), signed, sent, its outcome recorded. */
  private async send(delivery: WebhookDelivery): Promise<void> {
    const { store, config, log } = this.deps;
    const { event } = delivery;
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
      { resolveHost: this.resolveHost, allowPrivate: config.webhookAllowPrivate, secureContext: this.secureContext, signal: this.closing.signal },
    );
    // closing: left leased, so the next start (or another node) sends it, with the same delivery id
    if (!outcome.ok && outcome.reason === 'aborted') return;
    const result = await store.webhooks.finishDelivery(delivery.id, { ok: outcome.ok, at: Date.now() }, MAX_CONSECUTIVE_FAILURES);
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
