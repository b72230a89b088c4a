// A deployment under load (`--server URL`): verify-file, verify-fuzzy and GET /verify,
// one after the other, each with the corpus's files at `concurrency` requests in flight
// for `durationMs`. Bounded: never more than `concurrency` requests open, none started
// after the duration (or past `maxRequests`), each abandoned after its timeout, so the
// run stops by itself. Rate limits answer 429: counted by status like every error.
import { quantile } from './metrics.js';

export interface LoadRequest {
  method: 'GET' | 'POST';
  path: string;
  body?: Uint8Array | string;
  contentType?: string;
}

export interface EndpointLoad {
  endpoint: string;
  requests: number;
  seconds: number;
  rps: number;
  /** Of the 2xx answers, in ms. */
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  ok: number;
  /** Non-2xx answers by status, and `timeout` / `network` for requests that got none. */
  errors: Record<string, number>;
}

export interface LoadOptions {
  concurrency: number;
  durationMs: number;
  /** Per endpoint, at most this many requests (default: no cap besides the duration). */
  maxRequests?: number;
  /** Per request (default 30 s). */
  timeoutMs?: number;
}

/** The server's base URL, checked: http or https, no credentials, query or fragment. */
export function serverBase(url: string): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new RangeError(`--server must be a URL (http://host:port), not "${url}"`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new RangeError('--server must be an http or https URL');
  if (u.username || u.password || u.search || u.hash) throw new RangeError('--server takes a base URL without credentials, query or fragment');
  if (!u.pathname.endsWith('/')) u.pathname += '/';
  return u;
}

/** Runs `requests` (round robin) against `base` as the options say. */
export async function loadEndpoint(base: URL, endpoint: string, requests: LoadRequest[], options: LoadOptions): Promise<EndpointLoad> {
  const latencies: number[] = [];
  const errors: Record<string, number> = {};
  let sent = 0;
  let ok = 0;
  const cap = options.maxRequests ?? Infinity;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const start = performance.now();
  const end = start + options.durationMs;
  const lane = async () => {
    while (performance.now() < end && sent < cap && requests.length > 0) {
      const req = requests[sent++ % requests.length];
      const t0 = performance.now();
      try {
        const res = await fetch(new URL(req.path.replace(/^\//, ''), base), {
          method: req.method,
          body: req.body as BodyInit | undefined,
          headers: req.contentType ? { 'content-type': req.contentType } : undefined,
          signal: AbortSignal.timeout(timeoutMs),
        });
        await res.arrayBuffer();
        const ms = performance.now() - t0;
        if (res.status >= 200 && res.status < 300) {
          ok++;
          latencies.push(ms);
        } else errors[res.status] = (errors[res.status] ?? 0) + 1;
      } catch (e) {
        const kind = (e as Error).name === 'TimeoutError' ? 'timeout' : 'network';
        errors[kind] = (errors[kind] ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, lane));
  const seconds = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    endpoint,
    requests: sent,
    seconds,
    rps: sent / seconds,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    maxMs: latencies.length > 0 ? latencies[latencies.length - 1] : null,
    ok,
    errors,
  };
}
