// The decoder sandbox's process (see sandbox.ts): decodes what its parent sends and
// answers on the IPC channel. It ends itself at each request's deadline, when idle, and
// when the channel closes: sharp decodes off this thread, so the timers and the channel
// stay live while a decoder runs, and a process whose parent thread is gone does not linger.
import sharp from 'sharp';
import { msUntil } from './deadline.js';
import { decodeImageForHash, decodeImageHashes } from './image.js';
import type { SandboxReply, SandboxRequest } from './sandbox.js';

// Memory is bounded by the process's limit (sandbox.ts): libvips keeps no cache of
// decoded images between requests, and one decode at a time uses one thread (the
// pool runs one sandbox per worker, a worker per CPU).
sharp.cache(false);
sharp.concurrency(1);

const send = process.send?.bind(process);
if (send === undefined) throw new Error('sandbox-child runs only as the decoder sandbox (forked with an IPC channel)');

const die = () => process.kill(process.pid, 'SIGKILL');
process.on('disconnect', die);

// Idle for idleMs (the first argument) with nothing received and unanswered: exit with
// code 0, which tells the parent that no request was lost (it resends any sent meanwhile).
// This also ends a process whose parent thread was terminated (its channel stays open).
// After a large decode it exits so at once: the kernels' WebAssembly memory only grows
// and the allocator keeps what it freed, so a long-lived process would hold its largest
// image's memory (and the next one would need that much more, up to its limit).
const idleMs = Number(process.argv[2]) || 10_000;
const RECYCLE_RSS_BYTES = 256 << 20;
let inFlight = 0;
let idleTimer: NodeJS.Timeout | undefined;
const armIdle = () => {
  clearTimeout(idleTimer);
  if (inFlight !== 0) return;
  if (process.memoryUsage.rss() > RECYCLE_RSS_BYTES) process.exit(0);
  idleTimer = setTimeout(() => process.exit(0), idleMs);
};
armIdle();

async function handle(req: SandboxRequest): Promise<unknown> {
  switch (req.op) {
    case 'image-hash':
      return decodeImageForHash(req.bytes, req.format, req.options);
    case 'image-hashes':
      return decodeImageHashes(req.bytes, req.format, req.options);
    case 'integrity':
      return (await import('./integrity.js')).integrityReport(req.bytes);
    case 'content-credentials':
      return (await import('./c2pa.js')).readContentCredentials(req.bytes);
    case 'manifest-store':
      return (await import('./c2pa-store.js')).readManifestStore(req.bytes);
    case 'abort':
      process.abort(); // as a decoder crashing in C code would
    // falls through (never reached)
    case 'hang':
      return new Promise(() => {}); // a decoder that never returns (running off this thread, as sharp's do)
  }
}

process.on('message', async (req: SandboxRequest) => {
  inFlight++;
  clearTimeout(idleTimer);
  const watchdog = setTimeout(die, msUntil(req.deadline));
  let reply: SandboxReply;
  try {
    reply = { id: req.id, ok: true, value: await handle(req) };
  } catch (e) {
    reply = { id: req.id, ok: false, error: e instanceof Error ? e.message : String(e) };
  } finally {
    clearTimeout(watchdog);
  }
  send(reply, (err: Error | null) => {
    if (err) die();
    inFlight--;
    armIdle();
  });
});
