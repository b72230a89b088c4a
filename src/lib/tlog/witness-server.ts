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

const ORIGIN_CHECKPOINT = /^\/([0-9a-f]{64})\/checkpoint$/;
const decoder = new TextDecoder('utf-8', { fatal: true });

async function handle(witness: Witness, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/add-checkpoint') {
    if (req.method !== 'POST') return send(res, 405, 'text/plain; charset=utf-8', 'use POST\n', { Allow: 'POST' });
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
  // Node checks the request and header deadlines on this interval (30 s by default)
  const server: Server = createServer({ connectionsCheckingInterval: Math.min(1000, requestTimeout) }, (req, res) => {
    handle(witness, req, res).catch(() => {
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
