// The witness on Node (not in the browser build): its key and its state in a data
// directory, and its HTTP service (c2sp.org/tlog-witness). `provenant witness serve`
// runs it; a test or the server's tests start it in-process with startWitness().
//
// DIR (0700)
//   witness.key            the signer key, PRIVATE+KEY+<name>+<id>+base64(0x04 || seed), 0600,
//                          made on first start, never overwritten
//   logs/<sha256(origin)>  the latest cosigned checkpoint of each log (0600), replaced
//                          atomically: written to a temporary file, fsynced, renamed,
//                          and the directory fsynced, before the cosignature is answered
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { closeSync, constants, fsyncSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIPv6 } from 'node:net';
import { join } from 'node:path';
import { sha256Hex } from '../sha256.js';
import { parseCheckpoint } from './checkpoint.js';
import { SIG_COSIGNATURE_V1, formatSignerKey, parseNote, parseSignerKey, verifierOf } from './note.js';
import { Witness, type WitnessRecord, type WitnessStore } from './witness.js';

const KEY_FILE = 'witness.key';
const LOGS = 'logs';
/** A request body above this is refused (413): a checkpoint with 100 post-quantum signatures and 63 proof lines fits. */
export const WITNESS_MAX_BODY_BYTES = 1 << 20;
/** Time for a whole request (headers and body) to arrive. */
export const WITNESS_REQUEST_TIMEOUT_MS = 10_000;
const HEADERS_TIMEOUT_MS = 5_000;
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/**
 * add-checkpoint requests per second a client (its address; docs/transparency-log.md)
 * may send, on average. A log node sends about one a second while entries arrive, two
 * with a 409 retry; a few nodes behind one address still fit.
 */
export const WITNESS_CLIENT_RATE = 4;
/** A client may send this many seconds' worth of requests at once. */
const BURST_SECONDS = 5;
/** Clients remembered; beyond, those back to a full allowance are forgotten, then the oldest. */
const MAX_CLIENTS = 10_000;

/** A witness problem that is the operator's to fix (a key of another name, a key file others can read). */
export class WitnessSetupError extends Error {
  override name = 'WitnessSetupError';
}

function ensureDir(path: string): void {
  mkdirSync(path, { recursive: true, mode: 0o700 });
}

/**
 * The witness key of DIR: made on first use (mode 0600, never overwritten) under `name`,
 * or read back; a key of another name, or a key file group or others can read, is refused.
 */
export function loadOrCreateWitnessKey(dir: string, name?: string): { name: string; seed: Uint8Array; verifierKey: string; created: boolean } {
  ensureDir(dir);
  const path = join(dir, KEY_FILE);
  let created = false;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    if (name === undefined) throw new WitnessSetupError(`no witness key in ${dir} (provenant witness serve --name NAME makes one)`);
    const seed = new Uint8Array(randomBytes(32));
    text = `${formatSignerKey(name, SIG_COSIGNATURE_V1, seed)}\n`;
    // O_EXCL: two first starts cannot both write a key
    const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    fsyncDir(dir);
    created = true;
  }
  if ((statSync(path).mode & 0o077) !== 0) throw new WitnessSetupError(`${path} can be read by others: chmod 600 it`);
  let key;
  try {
    key = parseSignerKey(text);
  } catch {
    throw new WitnessSetupError(`${path} is not a witness key`);
  }
  if (key.type !== SIG_COSIGNATURE_V1) throw new WitnessSetupError(`${path} is not a cosignature/v1 key`);
  if (name !== undefined && key.name !== name) throw new WitnessSetupError(`${path} is the key of ${key.name}, not of ${name}`);
  return { name: key.name, seed: key.seed, verifierKey: verifierOf(key.name, SIG_COSIGNATURE_V1, key.seed).vkey, created };
}

function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The witness's records as files in DIR/logs, each replaced atomically and durably. */
export function fileWitnessStore(dir: string): WitnessStore {
  const logs = join(dir, LOGS);
  ensureDir(logs);
  const fileOf = (origin: string) => join(logs, sha256Hex(origin));
  return {
    async get(origin) {
      let text: string;
      try {
        text = await readFile(fileOf(origin), 'utf8');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw e;
      }
      const { size, rootHash } = parseCheckpoint(parseNote(text).text);
      return { size, rootHash, checkpoint: text };
    },
    async put(origin, record: WitnessRecord) {
      const target = fileOf(origin);
      const tmp = `${target}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
      const fh = await open(tmp, 'wx', 0o600);
      try {
        await fh.writeFile(record.checkpoint);
        await fh.sync();
      } catch (e) {
        await fh.close();
        await unlink(tmp).catch(() => undefined);
        throw e;
      }
      await fh.close();
      await rename(tmp, target);
      fsyncDir(logs);
    },
  };
}

export interface StartWitnessOptions {
  /** The data directory (key and state). */
  dir: string;
  /** The witness's name; its key is made under it on first start. */
  name: string;
  /** The verifier keys of the logs it witnesses. */
  logs: readonly string[];
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** POSIX seconds, for the cosignature timestamps (tests). */
  now?: () => number;
  /** Time for a whole request to arrive (default WITNESS_REQUEST_TIMEOUT_MS). */
  requestTimeoutMs?: number;
  /** add-checkpoint requests per second per client address (default WITNESS_CLIENT_RATE); null: no limit. */
  clientRate?: number | null;
  /** Milliseconds, for the rate limit (tests). */
  clock?: () => number;
}

export interface RunningWitness {
  readonly witness: Witness;
  readonly verifierKey: string;
  /** The submission (and monitoring) prefix, `http://host:port`. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, contentType: string, body: string, extra: Record<string, string> = {}): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store', ...extra });
  res.end(body);
}

/** The request body, at most `max` bytes (null beyond: the caller answers 413). */
async function readBody(req: IncomingMessage, max: number): Promise<Buffer | null> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > max) return null;
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of req) {
    total += (chunk as Buffer).length;
    if (total > max) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** The bits of an IPv6 client's address that name it: its /64, the usual size of one site's network. */
const IPV6_CLIENT_BITS = 64;

/** The 8 groups of an IPv6 address (`::` expanded, a dotted IPv4 tail as two groups). */
function ipv6Groups(address: string): number[] {
  let text = address.split('%')[0];
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4 !== null) {
    const [a, b, c, d] = v4.slice(1).map(Number);
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...Array<string>(zeros).fill('0'), ...right].map((g) => parseInt(g, 16));
}

/**
 * Who a request counts against: its IPv4 address (an IPv4-mapped IPv6 one too), or an
 * IPv6 address's /64, so one holder of a network cannot take 2^64 allowances.
 */
export function witnessClientKey(address: string | undefined): string {
  if (address === undefined) return 'unknown';
  if (!isIPv6(address)) return address;
  const groups = ipv6Groups(address);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6] >> 8, groups[6] & 0xff, groups[7] >> 8, groups[7] & 0xff].join('.');
  }
  return `${groups.slice(0, IPV6_CLIENT_BITS / 16).map((g) => g.toString(16)).join(':')}::/${IPV6_CLIENT_BITS}`;
}

/** A token bucket per client: `perSecond` requests a second on average, BURST_SECONDS' worth at once. */
export class ClientRateLimit {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly burst: number;

  constructor(
    private readonly perSecond: number,
    private readonly clock: () => number = Date.now,
  ) {
    if (!(perSecond > 0) || !Number.isFinite(perSecond)) throw new RangeError('a client rate is a positive number of requests per second');
    this.burst = Math.max(1, perSecond * BURST_SECONDS);
  }

  /** Takes one request of `client`: 0 when allowed, else the seconds until one is (for Retry-After). */
  take(client: string): number {
    const now = this.clock();
    const b = this.buckets.get(client);
    const tokens = b === undefined ? this.burst : Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.perSecond);
    if (tokens < 1) {
      this.buckets.set(client, { tokens, at: now });
      return Math.max(1, Math.ceil((1 - tokens) / this.perSecond));
    }
    if (b === undefined) this.forgetIdle(now);
    else this.buckets.delete(client); // re-inserted last: the map stays in order of last use
    this.buckets.set(client, { tokens: tokens - 1, at: now });
    return 0;
  }

  private forgetIdle(now: number): void {
    if (this.buckets.size < MAX_CLIENTS) return;
    for (const [client, b] of this.buckets) {
      if (b.tokens + ((now - b.at) / 1000) * this.perSecond >= this.burst) this.buckets.delete(client);
    }
    // still full: the least recently seen go (their allowance starts afresh)
    for (const client of this.buckets.keys()) {
      if (this.buckets.size < MAX_CLIENTS) break;
      this.buckets.delete(client);
    }
  }
}

const ORIGIN_CHECKPOINT = /^\/([0-9a-f]{64})\/checkpoint$/;
const decoder = new TextDecoder('utf-8', { fatal: true });

async function handle(witness: Witness, limit: ClientRateLimit | null, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/add-checkpoint') {
    if (req.method !== 'POST') return send(res, 405, 'text/plain; charset=utf-8', 'use POST\n', { Allow: 'POST' });
    // counted before the body is read: a refused request costs no parsing and no verify
    const wait = limit === null ? 0 : limit.take(witnessClientKey(req.socket.remoteAddress));
    if (wait > 0) {
      res.setHeader('Connection', 'close');
      return send(res, 429, 'text/plain; charset=utf-8', 'too many add-checkpoint requests from this address\n', { 'Retry-After': String(wait) });
    }
    const body = await readBody(req, WITNESS_MAX_BODY_BYTES);
    if (body === null) {
      res.setHeader('Connection', 'close');
      return send(res, 413, 'text/plain; charset=utf-8', 'request body too large\n');
    }
    let text: string;
    try {
      text = decoder.decode(body);
    } catch {
      return send(res, 400, 'text/plain; charset=utf-8', 'the body is not UTF-8\n');
    }
    const a = await witness.addCheckpoint(text);
    return send(res, a.status, a.contentType, a.body);
  }
  const m = ORIGIN_CHECKPOINT.exec(path);
  if (m !== null && (req.method === 'GET' || req.method === 'HEAD')) {
    const a = await witness.latestCheckpoint(m[1]);
    return send(res, a.status, a.contentType, a.body);
  }
  send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
}

/** Starts a witness over HTTP: key and state in `dir`, `POST /add-checkpoint`, `GET /<origin hash>/checkpoint`. */
export async function startWitness(options: StartWitnessOptions): Promise<RunningWitness> {
  const key = loadOrCreateWitnessKey(options.dir, options.name);
  const witness = new Witness({ name: key.name, seed: key.seed, logs: options.logs, store: fileWitnessStore(options.dir), ...(options.now ? { now: options.now } : {}) });
  const requestTimeout = options.requestTimeoutMs ?? WITNESS_REQUEST_TIMEOUT_MS;
  const clientRate = options.clientRate === undefined ? WITNESS_CLIENT_RATE : options.clientRate;
  const limit = clientRate === null ? null : new ClientRateLimit(clientRate, options.clock);
  // Node checks the request and header deadlines on this interval (30 s by default)
  const server: Server = createServer({ connectionsCheckingInterval: Math.min(1000, requestTimeout) }, (req, res) => {
    handle(witness, limit, req, res).catch(() => {
      // a store that failed: nothing was cosigned; the client may retry
      send(res, 500, 'text/plain; charset=utf-8', 'the witness could not store its state\n');
    });
  });
  server.requestTimeout = requestTimeout;
  server.headersTimeout = Math.min(HEADERS_TIMEOUT_MS, requestTimeout);
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.maxHeadersCount = 100;
  const host = options.host ?? '127.0.0.1';
  server.listen(options.port ?? 0, host);
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    witness,
    verifierKey: key.verifierKey,
    url: `http://${shown === '0.0.0.0' ? '127.0.0.1' : shown}:${port}`,
    port,
    async close() {
      server.closeIdleConnections();
      const closed = once(server, 'close');
      server.close();
      const timer = setTimeout(() => server.closeAllConnections(), 2000);
      await closed;
      clearTimeout(timer);
    },
  };
}
