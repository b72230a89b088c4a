// Configuration by environment variables (decisions.md 10), validated once at start:
// a bad value throws ConfigError with one line naming the variable.
import { join, resolve } from 'node:path';
import { CREDENTIALS_TIMEOUT_MS, FINGERPRINT_TIMEOUT_MS, isValidKeyName, parseVerifierKey, SIG_COSIGNATURE_V1, workersFromEnv } from 'provenant';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** One witness the log sends its checkpoints to: its cosignature verifier key and submission prefix (http or https). */
export interface LogWitnessConfig {
  vkey: string;
  url: string;
}

export interface Config {
  port: number;
  host: string;
  /** Absolute path: the SQLite database (unless databaseUrl), mail outbox (outbox/); the secrets' default home. */
  dataDir: string;
  /** `postgres://` URL of the PostgreSQL the nodes share (PROVENANT_DATABASE_URL); null: SQLite in dataDir. */
  databaseUrl: string | null;
  /** Absolute path of jwt.key and cell.key (PROVENANT_SECRETS_DIR; default dataDir/secrets): every node of a cluster needs the same. */
  secretsDir: string;
  /** Public base URL without a trailing slash; the OAuth issuer. */
  baseUrl: string;
  /** False when PROVENANT_BASE_URL was not set (serve.ts then fills in the bound port). */
  baseUrlFromEnv: boolean;
  /** Per-IP rate limits on (`PROVENANT_RATE_LIMIT=on`) or off. */
  rateLimit: boolean;
  /** Number of proxies whose X-Forwarded-For entry is trusted (from the right). */
  trustProxy: number;
  /** An IPv6 client is rate-limited as its network of this many bits (PROVENANT_RATE_LIMIT_IPV6_PREFIX, default 64; 128: each address). */
  rateLimitIpv6Prefix: number;
  /** `redis://` or `rediss://` URL of the Redis the nodes share (rate-limit windows); null: each node keeps its own in memory. */
  redisUrl: string | null;
  /** `smtp://host:port` (or smtps://); null writes relayed mail to $dataDir/outbox/*.eml. */
  smtpUrl: string | null;
  mailFrom: string;
  /** Tests only: webhooks may reach loopback/private addresses. */
  webhookAllowPrivate: boolean;
  /** The transparency log's witnesses (PROVENANT_LOG_WITNESSES: `<vkey> <url>[,...]`; docs/transparency-log.md). */
  logWitnesses: LogWitnessConfig[];
  /** The log's origin (PROVENANT_LOG_ORIGIN); null: the host of PROVENANT_BASE_URL and `/log` (tlog/log-key.ts). */
  logOrigin: string | null;
  workers: number;
  /** The time limit of fingerprinting one upload, in ms (spec 8: 60 s, the library's FINGERPRINT_TIMEOUT_MS; PROVENANT_FINGERPRINT_TIMEOUT_MS): the pool's deadline per task, passed down to every decoder. */
  fingerprintTimeoutMs: number;
  /** Memory limit of each decoder sandbox process, in MB (PROVENANT_DECODER_MEMORY_MB); undefined: the sandbox's default (src/media/sandbox.ts). */
  decoderMemoryMb: number | undefined;
  /** The time limit of reading an upload's Content Credentials beside its fingerprint, in ms (PROVENANT_CREDENTIALS_TIMEOUT_MS; the library's CREDENTIALS_TIMEOUT_MS, 10 s). */
  credentialsTimeoutMs: number;
  /** `host:port` list for resolving webhook hosts; empty = the system resolver. */
  dnsServers: string[];
  /** Our addition: the request log's level (`silent` in tests). */
  logLevel: LogLevel;
  /** The bearer token GET /metrics asks for; null: /metrics is not served. */
  metricsToken: string | null;
  /** node:http: the request line and headers must arrive within this (ms). */
  headersTimeoutMs: number;
  /** node:http: the whole request, body included, must arrive within this (ms); then 408 and close. */
  requestTimeoutMs: number;
  /** node:http: an idle keep-alive connection is closed after this (ms). */
  keepAliveTimeoutMs: number;
  /** A socket with no traffic either way for this long is destroyed (ms); above the fingerprint deadline. */
  idleTimeoutMs: number;
  /** An upload may take this long (ms) before it must keep up with `uploadMinRate`. */
  uploadGraceMs: number;
  /** Bytes per second an upload must average once its grace is over, or it gets 408 (a slow client frees its slot). */
  uploadMinRate: number;
  /** The change feed keeps at most this many of its newest changes (PROVENANT_FEED_MAX_CHANGES). */
  feedMaxChanges: number;
  /** ... and none older than this, in ms (PROVENANT_FEED_MAX_AGE_HOURS). */
  feedMaxAgeMs: number;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** The value of `name`, treating unset and empty (after trimming) alike. */
function read(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const text = read(env, name);
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new ConfigError(name, `expected an integer from ${min} to ${max}, got "${text}"`);
  }
  return Number(text);
}

function choice<T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T {
  const text = read(env, name)?.toLowerCase();
  if (text === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(text)) {
    throw new ConfigError(name, `expected one of ${allowed.join(', ')}, got "${text}"`);
  }
  return text as T;
}

function flag(env: Env, name: string, fallback: boolean, yes: string, no: string): boolean {
  const text = read(env, name)?.toLowerCase();
  if (text === undefined) return fallback;
  if (text === yes || text === 'true') return true;
  if (text === no || text === 'false') return false;
  throw new ConfigError(name, `expected ${yes} or ${no}, got "${text}"`);
}

function url(env: Env, name: string, protocols: string[]): URL | undefined {
  const text = read(env, name);
  if (text === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    throw new ConfigError(name, `not a URL: "${text}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `expected a ${protocols.map((p) => p.slice(0, -1)).join(' or ')} URL, got "${text}"`);
  }
  return parsed;
}

const HOST = /^[A-Za-z0-9.:[\]_-]+$/;
const EMAIL = /^[^\s@<>]+@[^\s@<>]+$/;
const BEARER_TOKEN = /^[\x21-\x7e]+$/;
const HOST_PORT = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$/;

/** `<vkey> <url>[,<vkey> <url> ...]`: cosignature/v1 verifier keys and http(s) URLs without credentials, query or fragment. */
function witnesses(env: Env, name: string): LogWitnessConfig[] {
  const text = read(env, name);
  if (text === undefined) return [];
  const list: LogWitnessConfig[] = [];
  for (const item of text.split(',')) {
    const parts = item.trim().split(/\s+/);
    if (parts.length !== 2) throw new ConfigError(name, 'expected "<vkey> <url>[,<vkey> <url> ...]"');
    const [vkey, href] = parts as [string, string];
    try {
      if (parseVerifierKey(vkey).type !== SIG_COSIGNATURE_V1) throw new Error('not a cosignature/v1 key');
    } catch (err) {
      throw new ConfigError(name, `not a witness verifier key (${err instanceof Error ? err.message : String(err)}): "${vkey}"`);
    }
    let parsed: URL;
    try {
      parsed = new URL(href);
    } catch {
      throw new ConfigError(name, `not a URL: "${href}"`);
    }
    if ((parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.username || parsed.password || parsed.search || parsed.hash) {
      throw new ConfigError(name, `expected an http(s) URL without credentials, query or fragment: "${href}"`);
    }
    list.push({ vkey, url: parsed.href.replace(/\/+$/, '') });
  }
  return list;
}

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535);

  const host = read(env, 'HOST') ?? '0.0.0.0';
  if (!HOST.test(host)) throw new ConfigError('HOST', `not a host name or address: "${host}"`);

  const dataDir = resolve(read(env, 'PROVENANT_DATA_DIR') ?? './data');
  const database = url(env, 'PROVENANT_DATABASE_URL', ['postgres:', 'postgresql:']);
  const secretsDir = resolve(read(env, 'PROVENANT_SECRETS_DIR') ?? join(dataDir, 'secrets'));

  const base = url(env, 'PROVENANT_BASE_URL', ['http:', 'https:']);
  if (base && (base.search || base.hash || base.username || base.password)) {
    throw new ConfigError('PROVENANT_BASE_URL', 'must not carry a query, fragment or credentials');
  }
  const baseUrl = base ? base.href.replace(/\/+$/, '') : `http://localhost:${port}`;

  const rateLimit = flag(env, 'PROVENANT_RATE_LIMIT', true, 'on', 'off');
  const trustProxy = integer(env, 'PROVENANT_TRUST_PROXY', 0, 0, 10);
  const rateLimitIpv6Prefix = integer(env, 'PROVENANT_RATE_LIMIT_IPV6_PREFIX', 64, 16, 128);
  const smtp = url(env, 'PROVENANT_SMTP_URL', ['smtp:', 'smtps:']);
  const redis = url(env, 'PROVENANT_REDIS_URL', ['redis:', 'rediss:']);

  const mailFrom = read(env, 'PROVENANT_MAIL_FROM') ?? 'relay@localhost';
  if (!EMAIL.test(mailFrom)) throw new ConfigError('PROVENANT_MAIL_FROM', `not an e-mail address: "${mailFrom}"`);

  const webhookAllowPrivate = flag(env, 'PROVENANT_WEBHOOK_ALLOW_PRIVATE', false, '1', '0');
  const logWitnesses = witnesses(env, 'PROVENANT_LOG_WITNESSES');
  const logOrigin = read(env, 'PROVENANT_LOG_ORIGIN') ?? null;
  // the checkpoint's first line and the log key's name: printable ASCII, no space, no '+'
  if (logOrigin !== null && !(/^[\x21-\x7e]{1,255}$/.test(logOrigin) && isValidKeyName(logOrigin))) {
    throw new ConfigError('PROVENANT_LOG_ORIGIN', `not a log origin (printable ASCII without spaces or "+", e.g. "provenant.example/log"): "${logOrigin}"`);
  }
  let workers: number;
  try {
    workers = workersFromEnv(read(env, 'PROVENANT_WORKERS'));
  } catch (err) {
    throw new ConfigError('PROVENANT_WORKERS', (err as Error).message);
  }
  const fingerprintTimeoutMs = integer(env, 'PROVENANT_FINGERPRINT_TIMEOUT_MS', FINGERPRINT_TIMEOUT_MS, 100, 3_600_000);
  const credentialsTimeoutMs = integer(env, 'PROVENANT_CREDENTIALS_TIMEOUT_MS', CREDENTIALS_TIMEOUT_MS, 100, 3_600_000);
  const decoderMemoryMb = read(env, 'PROVENANT_DECODER_MEMORY_MB') === undefined ? undefined : integer(env, 'PROVENANT_DECODER_MEMORY_MB', 0, 128, 1_048_576);

  const dnsText = read(env, 'PROVENANT_DNS_SERVERS');
  const dnsServers = dnsText === undefined ? [] : dnsText.split(',').map((s) => s.trim());
  for (const server of dnsServers) {
    const m = HOST_PORT.exec(server);
    if (!m || Number(m[1]) < 1 || Number(m[1]) > 65535) {
      throw new ConfigError('PROVENANT_DNS_SERVERS', `expected host:port[,host:port...], got "${dnsText}"`);
    }
  }

  const logLevel = choice(env, 'PROVENANT_LOG_LEVEL', 'info', LOG_LEVELS);

  const headersTimeoutMs = integer(env, 'PROVENANT_HEADERS_TIMEOUT_MS', 20_000, 100, 600_000);
  const requestTimeoutMs = integer(env, 'PROVENANT_REQUEST_TIMEOUT_MS', 300_000, 100, 3_600_000);
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError('PROVENANT_HEADERS_TIMEOUT_MS', `must not exceed PROVENANT_REQUEST_TIMEOUT_MS (${requestTimeoutMs})`);
  }
  const keepAliveTimeoutMs = integer(env, 'PROVENANT_KEEP_ALIVE_TIMEOUT_MS', 5_000, 100, 600_000);
  const idleTimeoutMs = integer(env, 'PROVENANT_IDLE_TIMEOUT_MS', 90_000, 100, 3_600_000);
  const uploadGraceMs = integer(env, 'PROVENANT_UPLOAD_GRACE_MS', 10_000, 0, 600_000);
  const uploadMinRate = integer(env, 'PROVENANT_UPLOAD_MIN_RATE', 64 * 1024, 1, 1024 * 1024 * 1024);

  const feedMaxChanges = integer(env, 'PROVENANT_FEED_MAX_CHANGES', 1_000_000, 100, 1_000_000_000);
  const feedMaxAgeMs = integer(env, 'PROVENANT_FEED_MAX_AGE_HOURS', 24, 1, 87_600) * 3_600_000;

  const metricsToken = read(env, 'PROVENANT_METRICS_TOKEN') ?? null;
  if (metricsToken !== null && !BEARER_TOKEN.test(metricsToken)) {
    throw new ConfigError('PROVENANT_METRICS_TOKEN', 'expected printable ASCII without spaces (a bearer token)');
  }

  return {
    port,
    host,
    dataDir,
    databaseUrl: database ? database.href : null,
    secretsDir,
    baseUrl,
    baseUrlFromEnv: base !== undefined,
    rateLimit,
    trustProxy,
    rateLimitIpv6Prefix,
    redisUrl: redis ? redis.href : null,
    smtpUrl: smtp ? smtp.href : null,
    mailFrom,
    webhookAllowPrivate,
    logWitnesses,
    logOrigin,
    workers,
    fingerprintTimeoutMs,
    decoderMemoryMb,
    credentialsTimeoutMs,
    dnsServers,
    logLevel,
    metricsToken,
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs,
    idleTimeoutMs,
    uploadGraceMs,
    uploadMinRate,
    feedMaxChanges,
    feedMaxAgeMs,
  };
}

/** The SQLite database in the data directory (the server and the admin CLI open the same file). */
export function databaseFile(config: Pick<Config, 'dataDir'>): string {
  return join(config.dataDir, 'provenant.db');
}
