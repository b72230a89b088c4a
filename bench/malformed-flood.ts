// A flood of malformed and oversized media to POST /verify-file, and what it costs the
// server's memory: the server (compiled, as `npm start` runs it; 2 workers, rate limits
// off) in a child process, its RSS and that of its decoder sandboxes sampled from /proc
// every 50 ms, before, at the peak and while it settles after the flood.
// The files: truncated PNG and JPEG, random bytes, tiny headers declaring huge images
// (PNG 65535 x 65535, BMP 100000 x 100000), 1-bit BMPs of 10000 x 10000 (12.5 MB each,
// 100 megapixels to decode), and 100-megapixel PNGs of 8 and 16 bits.
//
//   npm run build && node --import tsx bench/malformed-flood.ts
//   FLOOD_FILES=100 FLOOD_CONCURRENCY=8 node --import tsx bench/malformed-flood.ts
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { compiled, xorshift } from './support.js';
import { bmp1 } from '../test/helpers/media.js';

const FILES = Number(process.env.FLOOD_FILES ?? 300);
const CONCURRENCY = Number(process.env.FLOOD_CONCURRENCY ?? 8);
const SETTLE_S = Number(process.env.FLOOD_SETTLE_SECONDS ?? 20);
const SELF = fileURLToPath(import.meta.url);
const FIX = join(SELF, '..', '..', 'test', 'fixtures', 'media');

// ---- child mode: the server ----

async function serve(dataDir: string): Promise<void> {
  const { loadConfig } = await compiled<typeof import('../server/src/config.js')>('server/src/config.js');
  const { startServer } = await compiled<typeof import('../server/src/serve.js')>('server/src/serve.js');
  const env = { PORT: '0', HOST: '127.0.0.1', PROVENANT_DATA_DIR: dataDir, PROVENANT_RATE_LIMIT: 'off', PROVENANT_LOG_LEVEL: 'silent', PROVENANT_WORKERS: '2' };
  const running = await startServer(loadConfig(env));
  console.log(JSON.stringify({ url: running.url }));
}

// ---- the files ----

function pngChunk(type: string, data: Uint8Array): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  out.set(data, 8);
  return out; // CRC left zero: a malformed chunk too
}

function pngDeclaring(width: number, height: number): Uint8Array {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, pngChunk('IHDR', ihdr), pngChunk('IDAT', deflateSync(Buffer.alloc(49))), pngChunk('IEND', new Uint8Array(0))]);
}

async function corpus(): Promise<{ kind: string; bytes: Uint8Array }[]> {
  const jpeg = new Uint8Array(readFileSync(join(FIX, 'fruits.jpg')));
  const png = new Uint8Array(await sharp(jpeg).png().toBuffer());
  const big8 = new Uint8Array(await sharp({ create: { width: 10000, height: 10000, channels: 3, background: '#406080' } }).png().toBuffer());
  const big16 = new Uint8Array(
    await sharp({ create: { width: 10000, height: 10000, channels: 4, background: { r: 64, g: 96, b: 128, alpha: 0.5 } } }).toColourspace('rgb16').png().toBuffer(),
  );
  const hostileBmp = bmp1(10000, 10000);
  const next = xorshift(14);
  const kinds: [string, number, () => Uint8Array][] = [
    ['truncated jpeg', 40, () => jpeg.subarray(0, 100 + (next() % (jpeg.length - 200)))],
    ['truncated png', 40, () => png.subarray(0, 100 + (next() % (png.length - 200)))],
    ['random bytes', 40, () => new Uint8Array(randomBytes(200 + (next() % 100_000)))],
    ['png declaring 65535x65535', 30, () => pngDeclaring(65535, 65535)],
    ['bmp declaring 100000x100000, truncated', 30, () => bmp1(100_000, 100_000, 2)],
    ['bmp 1-bit 10000x10000 (12.5 MB)', 10, () => hostileBmp],
    ['png 8-bit 10000x10000', 5, () => big8],
    ['png 16-bit RGBA 10000x10000', 5, () => big16],
  ];
  const weight = kinds.reduce((a, k) => a + k[1], 0);
  const files: { kind: string; bytes: Uint8Array }[] = [];
  for (const [kind, share, make] of kinds) for (let i = 0; i < Math.round((share * FILES) / weight); i++) files.push({ kind, bytes: make() });
  // shuffled, so that heavy files arrive among light ones
  for (let i = files.length - 1; i > 0; i--) {
    const j = next() % (i + 1);
    [files[i], files[j]] = [files[j], files[i]];
  }
  return files;
}

// ---- memory ----

/** RSS of a process in MB (0 once it is gone). */
function rssMb(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
  } catch {
    return 0;
  }
}

/** The processes whose parent is `pid` (the decoder sandboxes of the server's workers). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(name));
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

class MemoryWatch {
  server = { now: 0, peak: 0 };
  sandboxes = { now: 0, peak: 0, count: 0 };
  private timer: NodeJS.Timeout;
  constructor(private readonly pid: number) {
    this.sample();
    this.timer = setInterval(() => this.sample(), 50);
  }
  sample(): void {
    this.server.now = rssMb(this.pid);
    this.server.peak = Math.max(this.server.peak, this.server.now);
    const kids = childrenOf(this.pid);
    this.sandboxes.count = kids.length;
    this.sandboxes.now = kids.reduce((a, p) => a + rssMb(p), 0);
    this.sandboxes.peak = Math.max(this.sandboxes.peak, this.sandboxes.now);
  }
  resetPeaks(): void {
    this.server.peak = this.server.now;
    this.sandboxes.peak = this.sandboxes.now;
  }
  stop(): void {
    clearInterval(this.timer);
  }
}

const mb = (n: number) => `${Math.round(n)} MB`;

// ---- the flood ----

async function main(): Promise<void> {
  const files = await corpus();
  const dataDir = mkdtempSync(join(tmpdir(), 'provenant-flood-'));
  const server = spawn(process.execPath, ['--import', 'tsx', SELF, 'serve', dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      server.stdout!.once('data', (line: Buffer) => resolve((JSON.parse(line.toString()) as { url: string }).url));
      server.once('exit', (code) => reject(new Error(`the server exited with ${code}`)));
    });
    const watch = new MemoryWatch(server.pid!);
    // one light request first, so that "before" includes started workers
    await fetch(`${url}/api/v1/sign-it/verify-file`, { method: 'POST', body: new Blob([readFileSync(join(FIX, 'fruits.jpg'))]) });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    watch.sample();
    const before = { server: watch.server.now, sandboxes: watch.sandboxes.now };
    watch.resetPeaks();

    const statuses = new Map<string, number>();
    const started = performance.now();
    let nextFile = 0;
    const client = async () => {
      while (nextFile < files.length) {
        const f = files[nextFile++];
        for (;;) {
          const res = await fetch(`${url}/api/v1/sign-it/verify-file`, { method: 'POST', body: new Blob([f.bytes as Uint8Array<ArrayBuffer>]) });
          const body = (await res.json()) as { match_type?: string; error?: string };
          const key = `${res.status} ${body.match_type ?? body.error ?? 'fingerprinted'}`;
          statuses.set(key, (statuses.get(key) ?? 0) + 1);
          if (res.status !== 503) break;
          await new Promise((resolve) => setTimeout(resolve, 100)); // busy: sent again
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, client));
    const seconds = (performance.now() - started) / 1000;
    const peak = { server: watch.server.peak, sandboxes: watch.sandboxes.peak };
    const settle: string[] = [];
    for (let s = 5; s <= SETTLE_S; s += 5) {
      await new Promise((resolve) => setTimeout(resolve, 5000));
      settle.push(`+${s} s: server ${mb(watch.server.now)}, sandboxes ${mb(watch.sandboxes.now)} (${watch.sandboxes.count})`);
    }
    watch.stop();

    console.log(`${files.length} files (${[...new Set(files.map((f) => f.kind))].join('; ')}), ${CONCURRENCY} clients, ${seconds.toFixed(1)} s`);
    console.log(`answers: ${[...statuses].map(([k, n]) => `${k}: ${n}`).join(', ')}`);
    console.log(`RSS before: server ${mb(before.server)}, sandboxes ${mb(before.sandboxes)}`);
    console.log(`RSS peak:   server ${mb(peak.server)}, sandboxes ${mb(peak.sandboxes)} (all at once)`);
    console.log(`RSS after the flood:\n  ${settle.join('\n  ')}`);
  } finally {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'serve') await serve(process.argv[3]);
else await main();
