// Where a webhook may point (spec 4.15, 6 rule 5; decisions.md 8): https on a public
// hostname, and every address the name resolves to public unicast. The WHATWG URL
// parser first turns every spelling of an IPv4 address (decimal, octal, hex, short
// forms, full-width digits, percent-encoding) into dotted decimal and compresses IPv6,
// so one address check covers them all; ipaddr.js names the address's range, and only
// `unicast` (not loopback, private, link-local, CGNAT, multicast, unspecified,
// reserved, IPv4-mapped, NAT64, 6to4 or Teredo) is public.
import { promises as dns } from 'node:dns';
import ipaddr from 'ipaddr.js';

/** A URL longer than this is refused (no receiver needs one). */
export const WEBHOOK_URL_MAX_LENGTH = 2048;

/** The host's addresses, or a thrown Error naming why none. */
export type HostResolver = (host: string, signal?: AbortSignal) => Promise<string[]>;

/** A URL or address a webhook may not use; `reason` says why, for the invalid_url message. */
export class WebhookUrlError extends Error {}

/**
 * Names that are never public (RFC 6761, 6762, 8375 and common private suffixes): a
 * name equal to one of these or under it.
 */
const PRIVATE_SUFFIXES = ['localhost', 'local', 'internal', 'localdomain', 'lan', 'intranet', 'corp', 'home', 'home.arpa', 'arpa', 'test', 'invalid', 'example', 'onion'];

/** Whether `address` (an IP literal, no brackets) is public unicast. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.parse(address).range() === 'unicast';
}

/** The hostname as the connection uses it: lower case, no IPv6 brackets, no trailing dots. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.+$/, '').toLowerCase();
}

/** The URL parsed and checked for its form alone: https, no credentials or fragment, a host. */
export function parseWebhookUrl(text: string): URL {
  if (text.length > WEBHOOK_URL_MAX_LENGTH) throw new WebhookUrlError(`url: at most ${WEBHOOK_URL_MAX_LENGTH} characters.`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WebhookUrlError('url: not an absolute URL.');
  }
  if (url.protocol !== 'https:') throw new WebhookUrlError('url: must be https.');
  // userinfo is where `https://trusted@127.0.0.1/` hides its real host; no receiver needs it
  if (url.username !== '' || url.password !== '') throw new WebhookUrlError('url: must not carry a user name or password.');
  if (url.hash !== '' || text.includes('#')) throw new WebhookUrlError('url: must not carry a fragment.');
  if (hostOf(url) === '') throw new WebhookUrlError('url: has no host.');
  return url;
}

/** Why the name `host` (not an IP literal) is not a public hostname, or null. */
function privateNameProblem(host: string): string | null {
  if (!host.includes('.')) return 'url: a single-label host name is not a public hostname.';
  for (const suffix of PRIVATE_SUFFIXES) {
    if (host === suffix || host.endsWith(`.${suffix}`)) return `url: .${suffix} names are not public hostnames.`;
  }
  return null;
}

/**
 * Checks `url` as registered or delivered to, and returns the addresses to connect to:
 * an IP literal itself, else every address the name resolves to, each of which must
 * be public. With `allowPrivate` (PROVENANT_WEBHOOK_ALLOW_PRIVATE, tests only) any
 * address and name pass. Throws WebhookUrlError.
 */
export async function checkedAddresses(url: URL, opts: { resolveHost: HostResolver; allowPrivate: boolean; signal?: AbortSignal }): Promise<string[]> {
  const host = hostOf(url);
  if (ipaddr.isValid(host)) {
    if (!opts.allowPrivate && !isPublicAddress(host)) throw new WebhookUrlError(`url: ${host} is not a public address.`);
    return [host];
  }
  if (!opts.allowPrivate) {
    const problem = privateNameProblem(host);
    if (problem !== null) throw new WebhookUrlError(problem);
  }
  let addresses: string[];
  try {
    addresses = await opts.resolveHost(host, opts.signal);
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    throw new WebhookUrlError(`url: ${host} does not resolve (${err instanceof Error ? err.message : String(err)}).`);
  }
  if (addresses.length === 0) throw new WebhookUrlError(`url: ${host} does not resolve.`);
  if (!opts.allowPrivate) {
    const refused = addresses.find((a) => !isPublicAddress(a));
    if (refused !== undefined) throw new WebhookUrlError(`url: ${host} resolves to ${refused}, not a public address.`);
  }
  return addresses;
}

const NO_RECORDS = new Set(['ENODATA', 'ENOTFOUND', 'ENONAME', 'NXDOMAIN']);

/**
 * A resolver of webhook hosts: through `servers` (PROVENANT_DNS_SERVERS, `host:port`)
 * with A and AAAA queries of its own, or the system's resolver when the list is empty.
 * An abort cancels the queries.
 */
export function createHostResolver(servers: readonly string[], timeoutMs = 3_000): HostResolver {
  if (servers.length === 0) {
    return async (host, signal) => {
      const found = await abortable(dns.lookup(host, { all: true, verbatim: true }), signal);
      return found.map((a) => a.address);
    };
  }
  return async (host, signal) => {
    const resolver = new dns.Resolver({ timeout: timeoutMs, tries: 2 });
    resolver.setServers([...servers]);
    const cancel = () => resolver.cancel();
    signal?.addEventListener('abort', cancel, { once: true });
    try {
      const answers = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
      const addresses = answers.flatMap((a) => (a.status === 'fulfilled' ? a.value : []));
      const failure = answers.find((a): a is PromiseRejectedResult => a.status === 'rejected' && !NO_RECORDS.has((a.reason as NodeJS.ErrnoException).code ?? ''));
      if (addresses.length === 0 && failure) throw failure.reason as Error;
      signal?.throwIfAborted();
      return addresses;
    } finally {
      signal?.removeEventListener('abort', cancel);
    }
  };
}

/** `work`, or the signal's reason once it aborts (the work itself cannot be stopped). */
function abortable<T>(work: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return work;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
