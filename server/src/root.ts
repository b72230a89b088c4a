// The composition root: the one place that builds the server's long-lived parts, in
// dependency order, each registered on one list (deps.ts Parts) that /healthz reports
// and that a shutdown, or a start that failed half-way, closes in reverse. Routers and
// services receive the parts (ServerDeps) and build none.
import { createFingerprintPool, HASH_TYPES } from 'provenant';
import { sessionTokenVerifier } from './auth/middleware.js';
import { ContactRelay } from './contact/mailer.js';
import { ConfigError, databaseFile, type Config } from './config.js';
import type { ServerDeps, TokenVerifier } from './deps.js';
import { Parts, type PartHealth } from './parts.js';
import { FeedPruner } from './feed-window.js';
import { createLogger, type Logger } from './log.js';
import { createMailTransport } from './mail/transport.js';
import { VerificationMailer } from './mail/verification.js';
import { MatchingService } from './matching/service.js';
import { UploadGate } from './matching/upload.js';
import { Metrics } from './metrics.js';
import { oauthAccessTokenVerifier } from './oauth/verifier.js';
import { RateLimitStores } from './ratelimit.js';
import { SharedRedis } from './redis.js';
import { adoptDataDirSecrets, Secrets } from './secrets.js';
import { VerifyCache } from './signit/cache.js';
import { CONTENT_RIGHTS_MAX_AGE_SECONDS } from './public/routes.js';
import { openStore as openEngine } from './store/index.js';
import { WebhookDispatcher } from './webhooks/dispatcher.js';
import { Checkpointer } from './tlog/checkpointer.js';
import { loadLogIdentity } from './tlog/log-key.js';
import type { Store } from './store/index.js';

export interface ComposeOptions {
  log?: Logger;
  /** Token verifiers tried after the session tokens' and the OAuth access tokens' (tests stand one in). */
  tokenVerifiers?: readonly TokenVerifier[];
  /** Extra CA certificates (PEM) webhook deliveries trust beside Node's roots (in-process tests; a server process takes NODE_EXTRA_CA_CERTS). */
  webhookCa?: string;
  /** false: no transparency-log entries are written (benches only, never a deployment: StoreOptions). */
  transparencyLog?: boolean;
}

/**
 * Opens the store (PostgreSQL with PROVENANT_DATABASE_URL, else SQLite under the data
 * directory; migrations logged) and makes the secrets now, not on the first request
 * that needs them. On a shared database the first node records the secrets'
 * fingerprint; a node with other keys refuses to start, so that no two nodes sign
 * tokens or seal cells with different keys.
 */
async function openStore(config: Config, log: Logger, transparencyLog = true): Promise<{ store: Store; secrets: Secrets }> {
  const store = await openEngine(
    { databaseUrl: config.databaseUrl, sqliteFile: databaseFile(config) },
    ({ version, name, ms }) => {
      if (ms === undefined) log.info('applying database migration', { version, name });
      else log.info('database migration applied', { version, name, ms });
    },
    (err) => log.warn('database connection lost; reconnecting', { error: err.message }),
    { transparencyLog },
  );
  try {
    const adopted = adoptDataDirSecrets(config.dataDir, config.secretsDir);
    if (adopted.length > 0) log.info('copied the data directory\'s secrets into PROVENANT_SECRETS_DIR', { secrets: adopted.join(','), to: config.secretsDir });
    const secrets = new Secrets(config.secretsDir);
    const fingerprint = secrets.fingerprint(); // reads (or makes) jwt.key and cell.key
    if ((await store.recordSecretsFingerprint(fingerprint)) !== fingerprint) {
      throw new ConfigError(
        'PROVENANT_SECRETS_DIR',
        `the keys in ${config.secretsDir} differ from those of the nodes that share this database (it records their fingerprint): give every node the same jwt.key and cell.key`,
      );
    }
    return { store, secrets };
  } catch (err) {
    await store.close();
    throw err;
  }
}

/**
 * Builds every part of a server (no listening: serve.ts does that), in this order:
 * the store, the fingerprint pool, the match index and its answer cache, the verify
 * cache, the shared Redis (PROVENANT_REDIS_URL), the rate-limit windows, the upload
 * gate, the token verifiers. A part that fails to start closes those built before it,
 * then the error is thrown.
 */
export async function composeServer(config: Config, options: ComposeOptions = {}): Promise<ServerDeps> {
  const log = options.log ?? createLogger(config.logLevel);
  const metrics = new Metrics();
  const parts = new Parts(log);
  try {
    const { store, secrets } = await openStore(config, log, options.transparencyLog ?? true);
    parts.add({
      name: 'store',
      async health(): Promise<PartHealth> {
        try {
          const { degraded } = await store.ping();
          return degraded === undefined ? { status: 'ok', engine: store.engine } : { status: 'degraded', engine: store.engine, degraded };
        } catch (err) {
          return { status: 'error', engine: store.engine, error: err instanceof Error ? err.message : String(err) };
        }
      },
      close: () => store.close(),
    });

    const workers = Math.max(1, config.workers);
    const pool = createFingerprintPool({
      workers,
      taskTimeoutMs: config.fingerprintTimeoutMs,
      decoderMemoryMb: config.decoderMemoryMb,
      credentialsTimeoutMs: config.credentialsTimeoutMs,
      maxQueue: 4 * workers,
    });
    parts.add({ name: 'pool', health: () => ({ status: 'ok', threads: pool.threads, queue: pool.queueSize }), close: () => pool.close() });
    metrics.gauge('provenant_pool_queue_depth', 'Fingerprint tasks waiting for a worker', [], () => pool.queueSize);

    const matching = new MatchingService({ store, log });
    parts.add({
      name: 'match_index',
      health: () => ({
        status: matching.state === 'failed' ? 'error' : 'ok',
        state: matching.state,
        fingerprints: matching.indexSize(),
        seq: matching.seq,
        answers_cached: matching.answers.size,
      }),
      close: () => matching.close(),
    });
    metrics.gauge('provenant_match_index_fingerprints', 'Fingerprints in the perceptual match index', ['hash_type'], () =>
      HASH_TYPES.map((t) => ({ labels: { hash_type: t }, value: matching.indexSize(t) })));
    metrics.gauge('provenant_match_index_bytes', 'WebAssembly memory held by the perceptual match index', [], () => matching.indexBytes());
    metrics.gauge('provenant_match_answers', 'Perceptual match answers by source since start (cache or index)', ['source'], () => [
      { labels: { source: 'cache' }, value: matching.answers.hits },
      { labels: { source: 'index' }, value: matching.answers.misses },
    ]);

    const verifyCache = new VerifyCache(store.feed, log);
    parts.add({ name: 'verify_cache', health: () => ({ status: 'ok', answers_cached: verifyCache.size, seq: verifyCache.seq }), close: () => verifyCache.close() });
    await verifyCache.start();

    const contentRightsCache = new VerifyCache(store.feed, log, { ttlSeconds: CONTENT_RIGHTS_MAX_AGE_SECONDS, name: 'content-rights cache' });
    parts.add({ name: 'content_rights_cache', health: () => ({ status: 'ok', answers_cached: contentRightsCache.size, seq: contentRightsCache.seq }), close: () => contentRightsCache.close() });
    await contentRightsCache.start();

    // the change feed keeps a bounded window; followers behind it reload from the tables
    const feedWindow = new FeedPruner(store.feed, { maxChanges: config.feedMaxChanges, maxAgeMs: config.feedMaxAgeMs }, log);
    parts.add({
      name: 'feed_window',
      health: () => ({ status: 'ok', max_changes: config.feedMaxChanges, max_age_ms: config.feedMaxAgeMs, pruned: feedWindow.pruned, last_run_at: feedWindow.lastRunAt }),
      close: () => feedWindow.close(),
    });
    feedWindow.start();

    // Redis holds what the nodes share and is short-lived: the rate-limit windows.
    let redis: SharedRedis | null = null;
    if (config.redisUrl !== null) {
      const shared = new SharedRedis(config.redisUrl, log);
      parts.add({ name: 'redis', health: () => shared.health(), close: () => shared.close() });
      await shared.start();
      redis = shared;
    }

    const rateLimits = new RateLimitStores(redis);
    parts.add({
      name: 'rate_limits',
      health: () => ({
        status: 'ok',
        enabled: config.rateLimit,
        shared: redis !== null,
        limits: rateLimits.limits,
        clients: rateLimits.clients,
        fallbacks: rateLimits.fallbacks,
      }),
    });

    // Two uploads per worker may be in flight (one decoding, one waiting); more get 503.
    const uploads = new UploadGate(2 * workers);
    parts.add({ name: 'uploads', health: () => ({ status: 'ok', in_flight: uploads.inFlight, max: uploads.max }) });
    metrics.gauge('provenant_uploads_in_flight', 'Uploads being read or fingerprinted (at most 2 per worker)', [], () => uploads.inFlight);

    const tokenVerifiers = [sessionTokenVerifier, oauthAccessTokenVerifier, ...(options.tokenVerifiers ?? [])];
    parts.add({ name: 'token_verifiers', health: () => ({ status: 'ok', count: tokenVerifiers.length }) });

    // the one mail transport (SMTP, or .eml files in the outbox), closed after its senders
    const mail = createMailTransport(config);
    parts.add({ name: 'mail', health: () => ({ status: 'ok', transport: mail.kind }), close: () => mail.close() });

    // the contact relay's queue, drained in the background by SMTP or into the outbox
    const contactRelay = new ContactRelay({ store, config, log, mail });
    parts.add({
      name: 'contact_relay',
      health: async () => ({ status: 'ok', transport: contactRelay.transport, pending: await store.contacts.pending(), ...contactRelay.counts }),
      close: () => contactRelay.close(),
    });
    contactRelay.start();

    // address-verification links, mailed off the request path
    const verificationMail = new VerificationMailer({ store, secrets, config, log, mail });
    parts.add({ name: 'verification_mail', health: () => ({ status: 'ok', in_flight: verificationMail.pending, ...verificationMail.counts }), close: () => verificationMail.close() });

    // webhook deliveries (spec 6): the outbox routed and sent in the background
    if (config.webhookAllowPrivate) log.warn('PROVENANT_WEBHOOK_ALLOW_PRIVATE=1: webhooks may be registered for and delivered to loopback and private addresses; for tests only, never in production');
    const webhooks = new WebhookDispatcher({ store, secrets, config, log, extraCa: options.webhookCa });
    parts.add({
      name: 'webhooks',
      health: async () => ({ status: 'ok', in_flight: webhooks.inFlightCount, ...(await store.webhooks.backlog()), ...webhooks.counts }),
      close: () => webhooks.close(),
    });
    webhooks.start();

    // the transparency log (issue 27): what was stored before it existed appended first,
    // then a checkpoint now and at least once a second while entries arrive
    const identity = loadLogIdentity(config, secrets);
    const backfilled = await store.log.backfill();
    if (backfilled > 0) log.info('transparency log: appended the events stored before it', { entries: backfilled });
    const checkpointer = new Checkpointer({ store: store.log, identity, witnesses: config.logWitnesses, log });
    parts.add({ name: 'transparency_log', health: () => checkpointer.check(), close: () => checkpointer.close() });
    await checkpointer.start();
    const transparencyLog = { store: store.log, identity, checkpointer };

    return { config, log, metrics, store, secrets, pool, matching, verifyCache, contentRightsCache, rateLimits, uploads, tokenVerifiers, mail, contactRelay, verificationMail, webhooks, transparencyLog, parts };
  } catch (err) {
    // what was started keeps the process alive (the pool, the index thread) or the database open
    await parts.close().catch((closeErr: Error) => log.error('closing after a failed start', { error: closeErr.message }));
    throw err;
  }
}
