// Where a webhook may point (spec 4.15, 6 rule 5; decisions.md 8): https on a public
// hostname, and every address the name resolves to public unicast. The WHATWG URL
// parser first turns every spelling of an IPv4 address (decimal, octal, hex, short
// forms, full-width digits, percent-encoding) into dotted decimal and compresses IPv6,
// so one address check covers them all; ipaddr.js names the address's range, and only
// `unicast` (not loopback, private, link-local, CGNAT, multicast, unspecified,
// reserved, IPv4-mapped, NAT64, 6to4 or Teredo) is public. The IPv6 ranges that carry
// an IPv4 address inside (IPv4-compatible ::/96, which ipaddr.js calls unicast, mapped
// ::ffff:0:0/96, NAT64 64:ff9b::/96 and 64:ff9b:1::/48, 6to4 2002::/16, Teredo
// 2001::/32) are refused whatever the IPv4 inside: a gateway on the way may turn them
// into that IPv4 address, and a receiver has no need of them. The message names the
// IPv4 address inside when it is not public.
//
// A name is checked through what it resolves to, but the message says only "resolves
// to a private address": echoing the address would map the operator's internal DNS for
// anyone who may register a webhook. The address goes to the server's log (`detail`).
import { promises as dns } from 'node:dns';
import ipaddr from 'ipaddr.js';

/** A URL longer than this is refused (no receiver needs one). */
export const WEBHOOK_URL_MAX_LENGTH = 2048;

/** The host's addresses, or a thrown Error naming why none. */
export type HostResolver = (host: string, signal?: AbortSignal) => Promise<string[]>;

/**
 * A URL or address a webhook may not use. `message` is for the caller (the invalid_url
 * message); `detail`, for the server's log, may also name what a host resolved to.
 */
export class WebhookUrlError extends Error {
  readonly detail: string;
  constructor(message: string, detail?: string) {
    super(message);
    this.detail = detail ?? message;
  }
}

/**
 * Names that are never public (RFC 6761, 6762, 8375 and common private suffixes): a
 * name equal to one of these or under it.
 */
const PRIVATE_SUFFIXES = ['localhost', 'local', 'internal', 'localdomain', 'lan', 'intranet', 'corp', 'home', 'home.arpa', 'arpa', 'test', 'invalid', 'example', 'onion'];

/** The IPv4 address an IPv6 address carries inside, and the range that carries it; null for other addresses. */
export function embeddedIpv4(address: ipaddr.IPv6): { range: string; ipv4: ipaddr.IPv4 } | null {
  const w = address.parts; // eight 16-bit words
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  if (w.slice(0, 6).every((x) => x === 0)) return { range: 'IPv4-compatible, ::/96', ipv4: v4(w[6], w[7]) };
  if (address.isIPv4MappedAddress()) return { range: 'IPv4-mapped, ::ffff:0:0/96', ipv4: address.toIPv4Address() };
  if (address.match(ipaddr.IPv6.parse('64:ff9b::'), 96)) return { range: 'NAT64, 64:ff9b::/96', ipv4: v4(w[6], w[7]) };
  // RFC 8215: a local-use NAT64 prefix of /48 to /96; where the IPv4 sits depends on its length (read here as the usual /96)
  if (address.match(ipaddr.IPv6.parse('64:ff9b:1::'), 48)) return { range: 'local-use NAT64, 64:ff9b:1::/48', ipv4: v4(w[6], w[7]) };
  if (address.match(ipaddr.IPv6.parse('2002::'), 16)) return { range: '6to4, 2002::/16', ipv4: v4(w[1], w[2]) };
  // RFC 4380: the server's address in words 2-3, the client's inverted in words 6-7
  if (address.match(ipaddr.IPv6.parse('2001::'), 32)) return { range: 'Teredo, 2001::/32', ipv4: v4(~w[6] & 0xffff, ~w[7] & 0xffff) };
  return null;
}

/** Whether `address` (an IP literal, no brackets) is public unicast, and no IPv6 range with an IPv4 inside. */
export function isPublicAddress(address: string): boolean {
  return addressProblem(address) === null;
}

/**
 * The address parsed. IPv6 with a dotted IPv4 tail is first rewritten in hex by the
 * WHATWG URL parser: ipaddr.js reads `::127.0.0.1` (IPv4-compatible, as the resolver
 * writes ::7f00:1) as `::ffff:127.0.0.1` (IPv4-mapped).
 */
function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  let text = address;
  if (text.includes(':') && text.includes('.')) {
    try {
      text = new URL(`http://[${text}]/`).hostname.slice(1, -1);
    } catch {
      return null;
    }
  }
  return ipaddr.isValid(text) ? ipaddr.parse(text) : null;
}

/** Why `address` (an IP literal, no brackets) is not public, as the end of a sentence; null when it is. */
function addressProblem(address: string): string | null {
  const parsed = parseAddress(address);
  if (parsed === null) return 'is not an IP address';
  if (parsed.kind() === 'ipv6' && !['loopback', 'unspecified'].includes(parsed.range())) {
    const inside = embeddedIpv4(parsed as ipaddr.IPv6);
    if (inside !== null) {
      if (inside.ipv4.range() !== 'unicast') return `carries the IPv4 address ${inside.ipv4} (${inside.ipv4.range()}) inside (${inside.range}), not a public address`;
      return `is an IPv6 address with an IPv4 address inside (${inside.range}): use a public address`;
    }
  }
  return parsed.range() === 'unicast' ? null : 'is not a public address';
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
    const problem = opts.allowPrivate ? null : addressProblem(host);
    if (problem !== null) throw new WebhookUrlError(`url: ${host} ${problem}.`);
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
    if (refused !== undefined) throw new WebhookUrlError(`url: ${host} resolves to a private address.`, `url: ${host} resolves to ${refused}, which ${addressProblem(refused)}.`);
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
