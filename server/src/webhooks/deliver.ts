// One webhook request, safe against server-side request forgery (spec 6; decisions.md
// 8): the host is resolved here and every address must be public unicast; the
// connection goes to the address that was checked (a `lookup` that returns it, so no
// second resolution can rebind the name), TLS still verifies the certificate for the
// hostname (SNI and the check use the name); no redirect is followed; one deadline
// covers DNS, connect, TLS and the response; only a small part of the body is read.
import { request } from 'node:https';
import type { LookupFunction } from 'node:net';
import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import { checkedAddresses, hostOf, parseWebhookUrl, WebhookUrlError, type HostResolver } from '../domain/url-rules.js';

/** Spec 6 rule 3, spec 8: the receiver must answer 2xx within this. */
export const WEBHOOK_DEADLINE_MS = 10_000;
/** Bytes of a receiver's answer read before the connection is dropped (the status is what counts). */
export const RESPONSE_BODY_LIMIT = 4096;

export interface DeliveryRequest {
  url: string;
  /** The exact bytes the signature covers. */
  body: Buffer;
  headers: Record<string, string>;
}

export interface DeliverOptions {
  resolveHost: HostResolver;
  /** PROVENANT_WEBHOOK_ALLOW_PRIVATE (tests only). */
  allowPrivate: boolean;
  /** TLS settings trusting extra CAs (trustingExtraCa); default Node's roots and NODE_EXTRA_CA_CERTS. */
  secureContext?: SecureContext;
  /** Aborts the request (a dispatcher closing; a ClaimLostError as the reason: its claim was lost). */
  signal?: AbortSignal;
  deadlineMs?: number;
  /**
   * Asked once the connection is up (TLS done), before a byte of the request is
   * written: false (or a rejection) and nothing is sent, the outcome 'superseded'. The
   * dispatcher confirms (and renews) its claim here.
   */
  beforeSend?: () => Promise<boolean>;
}

/**
 * Why a delivery failed: all of them count as failures (spec 3.2) but two that are not
 * the receiver's doing and are not recorded: 'aborted' (the dispatcher is closing) and
 * 'superseded' (its claim was lost or could not be confirmed: another claim sends it).
 */
export type FailureReason = 'refused_address' | 'timeout' | 'status' | 'redirect' | 'network' | 'aborted' | 'superseded';

/** The sender's claim on a delivery is no longer current (or could not be confirmed): it must not send. */
export class ClaimLostError extends Error {
  constructor(message = 'the claim on this delivery is no longer current') {
    super(message);
    this.name = 'ClaimLostError';
  }
}

export type DeliveryOutcome = { ok: true; status: number } | { ok: false; reason: FailureReason; status?: number; error: string };

class DeadlineError extends Error {}

/**
 * TLS settings that trust `extraCa` (PEM) beside Node's roots, made once: building a
 * context from the ~140 root certificates costs over 100 ms, far more than a request.
 */
export function trustingExtraCa(extraCa: string): SecureContext {
  return createSecureContext({ ca: [...rootCertificates, extraCa] });
}

/** Sends `req` once. Never throws: every way it can go wrong is a failure outcome. */
export async function deliverWebhook(req: DeliveryRequest, opts: DeliverOptions): Promise<DeliveryOutcome> {
  const deadlineMs = opts.deadlineMs ?? WEBHOOK_DEADLINE_MS;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DeadlineError(`no answer within ${deadlineMs} ms`)), deadlineMs);
  const onAbort = () => controller.abort(opts.signal?.reason);
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const url = parseWebhookUrl(req.url);
    const [address] = await checkedAddresses(url, { resolveHost: opts.resolveHost, allowPrivate: opts.allowPrivate, signal: controller.signal });
    const status = await post(url, address, req, opts.secureContext, controller.signal, opts.beforeSend);
    if (status >= 200 && status < 300) return { ok: true, status };
    if (status >= 300 && status < 400) return { ok: false, reason: 'redirect', status, error: `answered ${status}; redirects are not followed` };
    return { ok: false, reason: 'status', status, error: `answered ${status}` };
  } catch (err) {
    const cause = controller.signal.aborted ? controller.signal.reason : err;
    const error = cause instanceof Error ? cause.message : String(cause);
    if (cause instanceof DeadlineError) return { ok: false, reason: 'timeout', error };
    if (cause instanceof ClaimLostError) return { ok: false, reason: 'superseded', error };
    // the log may name what the host resolved to (the caller's message never does)
    if (err instanceof WebhookUrlError) return { ok: false, reason: 'refused_address', error: err.detail };
    if (controller.signal.aborted) return { ok: false, reason: 'aborted', error };
    return { ok: false, reason: 'network', error };
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * POSTs to `address` (already checked) for `url`'s host; resolves with the status once
 * the capped body is read. With `beforeSend`, nothing is written until the TLS
 * connection is up and it has said yes (a ClientRequest sends its headers with its
 * first write, not before).
 */
function post(
  url: URL,
  address: string,
  req: DeliveryRequest,
  secureContext: SecureContext | undefined,
  signal: AbortSignal,
  beforeSend?: () => Promise<boolean>,
): Promise<number> {
  const family = address.includes(':') ? 6 : 4;
  // the one answer to every lookup of this connection: the checked address
  const lookup = ((_host, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else (callback as (e: null, a: string, f: number) => void)(null, address, family);
  }) as LookupFunction;
  return new Promise<number>((resolve, reject) => {
    const outgoing = request(
      {
        method: 'POST',
        host: hostOf(url),
        port: url.port === '' ? 443 : Number(url.port),
        path: `${url.pathname}${url.search}`,
        headers: { ...req.headers, host: url.host, 'content-length': String(req.body.length) },
        lookup,
        // a fresh connection per delivery: a pooled socket would skip the address check
        agent: false,
        ...(secureContext !== undefined ? { secureContext } : {}),
        signal,
      },
      (res) => {
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read >= RESPONSE_BODY_LIMIT) {
            res.destroy();
            resolve(res.statusCode ?? 0);
          }
        });
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    if (beforeSend === undefined) {
      outgoing.end(req.body);
      return;
    }
    // a fresh connection (agent: false): its handshake is still ahead
    outgoing.once('socket', (socket) => {
      socket.once('secureConnect', () => {
        beforeSend().then(
          (go) => {
            if (outgoing.destroyed) return;
            if (go) outgoing.end(req.body);
            else outgoing.destroy(new ClaimLostError());
          },
          (err: unknown) => outgoing.destroy(new ClaimLostError(`the claim could not be confirmed: ${err instanceof Error ? err.message : String(err)}`)),
        );
      });
    });
  });
}
