// What the webhook tests stand up on loopback: a certificate authority of their own
// (openssl, in a temp directory), an HTTPS receiver with a certificate from it that
// checks every delivery's signature in constant time (the library's
// verifyWebhookSignature), and a DNS server (dns-packet over UDP) whose answers a test
// scripts per name and query.
import { execFileSync } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import dnsPacket from 'dns-packet';
import { verifyWebhookSignature } from '../../src/lib/webhook.js';

/** Names under this domain are served by the test DNS server (it is not a reserved suffix, so the URL rules treat it as public). */
export const TEST_DOMAIN = 'provenant-webhook-tests.net';

export interface TestCa {
  /** The CA certificate (PEM): NODE_EXTRA_CA_CERTS for a server process, ComposeOptions.webhookCa in process. */
  caPem: string;
  caFile: string;
  key: string;
  cert: string;
  remove(): void;
}

/** A CA and a leaf for 127.0.0.1, ::1, localhost and *.TEST_DOMAIN, made with openssl. */
export function makeTestCa(): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'provenant-webhook-ca-'));
  const f = (name: string) => join(dir, name);
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  run('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', f('ca.key'), '-out', f('ca.pem'), '-days', '2', '-subj', '/CN=Provenant webhook tests CA');
  run('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', f('leaf.key'), '-out', f('leaf.csr'), '-subj', '/CN=receiver');
  writeFileSync(f('leaf.ext'), `subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost,DNS:${TEST_DOMAIN},DNS:*.${TEST_DOMAIN}\n`);
  run('x509', '-req', '-in', f('leaf.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-out', f('leaf.pem'), '-days', '2', '-extfile', f('leaf.ext'));
  return {
    caPem: readFileSync(f('ca.pem'), 'utf8'),
    caFile: f('ca.pem'),
    key: readFileSync(f('leaf.key'), 'utf8'),
    cert: readFileSync(f('leaf.pem'), 'utf8'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface ReceivedDelivery {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The body exactly as received. */
  raw: Buffer;
  body: Record<string, unknown>;
  /** verifyWebhookSignature with the secret registered for the path (null: no secret known for it). */
  signatureValid: boolean | null;
  at: number;
}

/** How the receiver answers one request: a status, after a delay, with headers. */
export type Answer = { status: number; delayMs?: number; headers?: Record<string, string> };

export class Receiver {
  readonly received: ReceivedDelivery[] = [];
  /** The secret of the webhook registered for a path (set by the test after creating it). */
  readonly secrets = new Map<string, string>();
  /** How each path answers (default 200). */
  readonly answers = new Map<string, (n: number) => Answer>();
  private readonly timers = new Set<NodeJS.Timeout>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(ca: TestCa, host = '127.0.0.1'): Promise<Receiver> {
    const server = createServer({ key: ca.key, cert: ca.cert });
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    const receiver = new Receiver(server, (server.address() as AddressInfo).port);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const path = req.url ?? '/';
        const secret = receiver.secrets.get(path);
        const signature = req.headers['x-service-signature'];
        receiver.received.push({
          path,
          headers: req.headers,
          raw,
          body: JSON.parse(raw.toString('utf8')) as Record<string, unknown>,
          signatureValid: secret === undefined ? null : verifyWebhookSignature(secret, raw, typeof signature === 'string' ? signature : null),
          at: Date.now(),
        });
        const n = receiver.received.filter((r) => r.path === path).length;
        const answer = receiver.answers.get(path)?.(n) ?? { status: 200 };
        const timer = setTimeout(() => {
          receiver.timers.delete(timer);
          if (res.destroyed) return;
          res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
          res.end('ok');
        }, answer.delayMs ?? 0);
        receiver.timers.add(timer);
      });
    });
    return receiver;
  }

  url(path: string, host = '127.0.0.1'): string {
    return `https://${host.includes(':') ? `[${host}]` : host}:${this.port}${path}`;
  }

  at(path: string): ReceivedDelivery[] {
    return this.received.filter((r) => r.path === path);
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Answers A/AAAA queries with what `answer(name, type, n)` returns (n: the nth query of that name and type); none: NXDOMAIN. */
export class TestDns {
  readonly queries: { name: string; type: string }[] = [];
  private constructor(
    private readonly socket: Socket,
    readonly port: number,
    public answer: (name: string, type: 'A' | 'AAAA', n: number) => string[] | 'hang' | null,
  ) {}

  static async start(answer: TestDns['answer']): Promise<TestDns> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const dns = new TestDns(socket, socket.address().port, answer);
    socket.on('message', (msg, rinfo) => {
      const query = dnsPacket.decode(msg);
      const question = query.questions?.[0];
      if (!question) return;
      const type = question.type as 'A' | 'AAAA';
      const name = question.name.toLowerCase();
      dns.queries.push({ name, type });
      const n = dns.queries.filter((q) => q.name === name && q.type === type).length;
      const addresses = type === 'A' || type === 'AAAA' ? dns.answer(name, type, n) : [];
      if (addresses === 'hang') return;
      const reply = dnsPacket.encode({
        type: 'response',
        id: query.id,
        flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (addresses === null ? 3 : 0), // rcode 3: NXDOMAIN
        questions: [question],
        answers: (addresses ?? []).map((data) => ({ type, name: question.name, ttl: 1, class: 'IN' as const, data })),
      });
      socket.send(reply, rinfo.port, rinfo.address);
    });
    return dns;
  }

  /** For PROVENANT_DNS_SERVERS. */
  get server(): string {
    return `127.0.0.1:${this.port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}
