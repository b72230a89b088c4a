// `provenant vault serve`: the vault's signing service for apps on this machine (spec 1
// points 2-3, spec 7's vault path). Loopback only; a web page may call it only from an
// origin in the vault's allow-list (CORS), and a request names the Host it was sent to
// (so a DNS-rebound page cannot reach it). Nothing is signed without the user's answer
// in the terminal, which names the origin; no answer within the timeout declines. The
// answer is the signed record, not published (action_hash null, no quota drawn), unless
// a desktop app (no Origin) naming this identity asks to publish: its quota is checked
// before the prompt. Failures answer VAULT_FAILURES' status and code.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InvalidFieldError, normalizeRecordContent, type RecordContent, type SignedRecord } from '../lib/records.js';
import { normalizeAgentKey } from '../lib/keys.js';
import type { ProvenantClient } from '../sdk/client.js';
import { ProvenantError } from '../sdk/errors.js';
import { VAULT_APPROVAL_TIMEOUT_MS, VAULT_FAILURES, VAULT_SIGN_PATH, type VaultFailureCode } from '../sdk/vault.js';
import type { KeyFile } from './keyfile.js';
import { checkQuota } from './sign.js';
import type { VaultState } from './state.js';
import { actionHashOf, signContent, type Vault } from './vault.js';
import { VaultCommandError } from './errors.js';

const BODY_LIMIT = 256 * 1024;
const IDENTITY_PATH = '/v1/identity';

/** A sign request waiting for the user. */
export interface PendingRequest {
  id: number;
  /** The web page's origin, or null for a local app that sent none. */
  origin: string | null;
  content: RecordContent;
  publish: boolean;
}

export type Answer = 'approved' | 'declined' | 'timeout';

export interface VaultServiceOptions {
  key: KeyFile;
  state: VaultState;
  /** The unlocked private key, or null while the vault is locked (unlock() opens it). */
  privateKey: Uint8Array | null;
  port: number;
  /** The user's answer to a request; must settle by `timeoutMs` with 'timeout'. */
  ask(request: PendingRequest, timeoutMs: number): Promise<Answer>;
  /** The sign-it service a linked desktop app's records are published to. */
  client: ProvenantClient;
  approvalTimeoutMs?: number;
}

export interface VaultService {
  url: string;
  unlock(privateKey: Uint8Array): void;
  close(): Promise<void>;
}

class Refusal extends Error {
  constructor(readonly code: VaultFailureCode, message?: string, readonly extra: Record<string, unknown> = {}) {
    super(message ?? VAULT_FAILURES[code][1]);
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT) throw new Refusal('invalid_request', `the body is larger than ${BODY_LIMIT} bytes`);
    chunks.push(chunk);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new Refusal('invalid_request', 'the body must be JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Refusal('invalid_request', 'the body must be a JSON object');
  return body as Record<string, unknown>;
}

/** The record content of a sign request, checked as the server checks a sign body (the message names the field). */
function requestedContent(body: Record<string, unknown>): RecordContent {
  try {
    return normalizeRecordContent(body as { file_hash: unknown });
  } catch (err) {
    if (err instanceof InvalidFieldError) throw new Refusal('invalid_request', err.message, { field: err.field });
    throw err;
  }
}

export async function startVaultService(options: VaultServiceOptions): Promise<VaultService> {
  let privateKey = options.privateKey;
  let nextId = 1;
  const timeoutMs = options.approvalTimeoutMs ?? VAULT_APPROVAL_TIMEOUT_MS;
  const allowed = (): Set<string> => new Set(options.state.config().allowed_origins);
  let hosts: Set<string> = new Set();

  async function sign(origin: string | null, body: Record<string, unknown>): Promise<{ record: SignedRecord; action_hash: string | null }> {
    if (privateKey === null) throw new Refusal('vault_locked');
    if (body.signer !== undefined && (typeof body.signer !== 'string' || normalizeAgentKey(body.signer) !== options.key.agentPubKey)) {
      throw new Refusal('other_identity', `The vault holds ${options.key.agentPubKey}, not ${String(body.signer)}.`);
    }
    const content = requestedContent(body);
    const publish = body.publish === true;
    const clientId = typeof body.client_id === 'string' && body.client_id !== '' ? body.client_id : null;
    const vault: Vault = { key: options.key, privateKey, state: options.state };
    if (publish) {
      if (origin !== null) throw new Refusal('blocked', 'A web page gets its record unpublished; only a desktop app linked to this identity may ask to publish.');
      if (body.signer === undefined) throw new Refusal('invalid_request', 'A publish request names the identity it is linked to in signer.', { field: 'signer' });
      try {
        await checkQuota(vault, options.client, 1, clientId);
      } catch (err) {
        if (err instanceof VaultCommandError && err.code === 'over_quota') throw new Refusal('quota_exceeded', err.message);
        throw err;
      }
    }
    const answer = await options.ask({ id: nextId++, origin, content, publish }, timeoutMs);
    if (answer !== 'approved') throw new Refusal(answer === 'timeout' ? 'timeout' : 'declined');
    const signed = signContent(vault, content);
    let actionHash: string | null = null;
    if (publish) {
      try {
        actionHash = (await options.client.publish(signed.record, clientId)).action_hash;
      } catch (err) {
        if (err instanceof ProvenantError && err.code === 'quota_exceeded') throw new Refusal('quota_exceeded', err.message, err.body ?? {});
        throw err;
      }
      if (actionHash !== actionHashOf(signed.record)) throw new Error(`the server answered action hash ${actionHash}, not ${signed.action_hash}`);
    }
    options.state.append({ kind: 'record', record: signed.record, action_hash: signed.action_hash, published: publish, server: publish ? options.client.baseUrl : null, file: null });
    return { record: signed.record, action_hash: actionHash };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const origin = typeof req.headers.origin === 'string' ? req.headers.origin : null;
    // DNS rebinding: a page of another name resolved to 127.0.0.1 still sends its own Host.
    if (!hosts.has(String(req.headers.host))) return send(res, 403, { error: 'blocked', message: 'Address the vault as 127.0.0.1 or localhost.' });
    if (origin !== null) {
      if (!allowed().has(origin)) return send(res, 403, { error: 'blocked', message: VAULT_FAILURES.blocked[1] });
      res.setHeader('access-control-allow-origin', origin);
      res.setHeader('vary', 'Origin');
    }
    const path = new URL(req.url ?? '/', 'http://vault').pathname;
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        'access-control-allow-methods': 'GET, POST',
        'access-control-allow-headers': 'content-type',
        'access-control-allow-private-network': 'true', // Chrome's Private Network Access preflight
        'access-control-max-age': '600',
      });
      return void res.end();
    }
    if (path === IDENTITY_PATH && req.method === 'GET') {
      return send(res, 200, { agent_pub_key: options.key.agentPubKey, did: options.key.did, locked: privateKey === null });
    }
    if (path !== VAULT_SIGN_PATH || req.method !== 'POST') return send(res, 404, { error: 'not_found', message: `${req.method} ${path} is not a vault endpoint` });
    try {
      send(res, 200, await sign(origin, await readJson(req)));
    } catch (err) {
      if (err instanceof Refusal) return send(res, VAULT_FAILURES[err.code][0], { error: err.code, message: err.message, ...err.extra });
      const message = err instanceof VaultCommandError ? err.message : `the vault failed: ${(err as Error).message}`;
      send(res, 502, { error: 'invalid_answer', message });
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, { error: 'invalid_answer', message: (err as Error).message });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  return {
    url: `http://127.0.0.1:${port}`,
    unlock(key: Uint8Array) {
      privateKey = key;
    },
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
