// The decoder sandbox: image decoding (sharp, libvips and the codec libraries under
// it, and our BMP reader; for image hashes and for the integrity report's LSB
// statistics) in a process of its own, so that a decoder that crashes on a hostile file
// (a segfault or abort in C code, which no worker thread survives) or needs more than
// the process's memory limit (a 12.5 MB 1-bit BMP decodes to 300 MB of pixels) ends or
// fails that process only: the file's request fails, and the next request starts a new
// process. The pool's workers keep one
// each (src/pool/worker-sandbox.ts); in-process callers of fingerprintFile may pass one.
//
// The host (this file) forks dist/src/media/sandbox-child.js with an IPC channel in
// the V8 serialisation, which writes a Uint8Array as exactly its own bytes (not its
// whole ArrayBuffer, which for a small Buffer is Node's shared pool: checked by
// test/workers/handover.test.ts); the child reads them as a view of its channel's
// read buffer, which may hold other messages, so it must honour byteOffset (it does:
// sharp, bmp.ts and integrity/ all do). It sends {id, op, deadline, ...} and gets
// {id, ok, value | error}. A request past its deadline has the process killed. The
// child also ends itself at the deadline, when idle and when its channel closes: a
// worker thread that is terminated leaves its child's channel open, and its child
// must not outlive it for long (sandbox-child.ts).
import { fork, type ChildProcess } from 'node:child_process';
import type { MediaFormat } from '../lib/detect.js';
import type { IntegrityReport } from '../lib/integrity.js';
import type { ManifestStoreReading } from './c2pa-store.js';
import type { ContentCredentials } from '../lib/content-credentials.js';
import { compiledFile } from '../lib/wasm.js';
import { deadlineOrDefault, msUntil } from './deadline.js';
import { ImageDecodeError, type ImageDecodeOptions, type ImageHashes, type ImageHashOptions } from './image.js';
import { DECODER_DEFAULT_MEMORY_MB, memoryLimitScript } from './memory-limit.js';

/** Times a request is sent again to a new process after an idle exit crossed it. */
const MAX_RESENDS = 3;

type RequestBody =
  | { op: 'image-hash'; bytes: Uint8Array; format: MediaFormat; options: ImageDecodeOptions }
  | { op: 'image-hashes'; bytes: Uint8Array; format: MediaFormat; options: ImageHashOptions }
  | { op: 'integrity'; bytes: Uint8Array }
  | { op: 'content-credentials'; bytes: Uint8Array }
  | { op: 'manifest-store'; bytes: Uint8Array }
  | { op: 'abort' | 'hang' };

/** What the child is asked to do (sandbox-child.ts). */
export type SandboxRequest = RequestBody & { id: number; deadline: number };

export type SandboxReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };

/** The sandbox process ended (crashed, was killed) or ran past a deadline; the request got no answer. */
export class SandboxError extends Error {
  override name = 'SandboxError';
  constructor(readonly code: 'crashed' | 'timeout', message: string) {
    super(message);
  }
}

interface Pending {
  body: RequestBody;
  /** When the request gives up (epoch ms). */
  deadline: number;
  /** The process the request was sent to (null until it is sent). */
  child: ChildProcess | null;
  /** Times sent again after an idle exit (bounded, so a process that exits at once cannot loop). */
  resends: number;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

export interface DecoderSandboxOptions {
  /**
   * An idle sandbox process ends itself after this many ms (default 10000): less than
   * the pool's idle time for a worker (30 s), so that the worker, still running, reaps it.
   */
  idleMs?: number;
  /**
   * The process's memory limit in MB (default SANDBOX_DEFAULT_MEMORY_MB), enforced by
   * the kernel as RLIMIT_DATA (see start()); null for none. A decode that needs more
   * fails (libvips reports out of memory, or the process dies): that file only.
   */
  memoryLimitMb?: number | null;
}

/** The default memory limit of a sandbox process, in MB (memory-limit.ts: the same for every decoder process). */
export const SANDBOX_DEFAULT_MEMORY_MB = DECODER_DEFAULT_MEMORY_MB;

export class DecoderSandbox {
  private child: ChildProcess | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;
  private readonly idleMs: number;
  private readonly limitMb: number | null;

  constructor(options: DecoderSandboxOptions = {}) {
    this.idleMs = options.idleMs ?? 10_000;
    this.limitMb = options.memoryLimitMb === undefined ? SANDBOX_DEFAULT_MEMORY_MB : options.memoryLimitMb;
  }

  /** The memory limit of its process in MB (null: none); ffmpeg runs beside it get the same (fingerprint.ts). */
  get memoryLimitMb(): number | null {
    return this.limitMb;
  }

  /** The process id of the current sandbox process, or null when none is running. */
  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  /** The 8-byte ImagePHash of an image file's bytes (a copy of them goes to the sandbox process). */
  imageHash(bytes: Uint8Array, format: MediaFormat, options: ImageDecodeOptions = {}, deadline?: number): Promise<Uint8Array> {
    return this.request({ op: 'image-hash', bytes, format, options }, deadline) as Promise<Uint8Array>;
  }

  /** ImagePHash and PDQ of an image file's bytes, from one decode in the sandbox process. */
  imageHashes(bytes: Uint8Array, format: MediaFormat, options: ImageHashOptions = {}, deadline?: number): Promise<ImageHashes> {
    return this.request({ op: 'image-hashes', bytes, format, options }, deadline) as Promise<ImageHashes>;
  }

  /** The integrity report (src/media/integrity.ts) of a file's bytes, made in the sandbox process. */
  integrityReport(bytes: Uint8Array, deadline?: number): Promise<IntegrityReport> {
    return this.request({ op: 'integrity', bytes }, deadline) as Promise<IntegrityReport>;
  }

  /** The Content Credentials (C2PA, src/media/c2pa.ts) of a file's bytes, read in the sandbox process. */
  contentCredentials(bytes: Uint8Array, deadline?: number): Promise<ContentCredentials> {
    return this.request({ op: 'content-credentials', bytes }, deadline) as Promise<ContentCredentials>;
  }

  /**
   * A detached C2PA manifest store read (src/media/c2pa-store.ts) in the sandbox process;
   * a store it refuses rejects with an Error carrying the reason (not a SandboxError,
   * which is the sandbox failing: crashed, or past the deadline).
   */
  manifestStore(bytes: Uint8Array, deadline?: number): Promise<ManifestStoreReading> {
    return this.request({ op: 'manifest-store', bytes }, deadline) as Promise<ManifestStoreReading>;
  }

  /**
   * For checking the boundary (tests, operators): `abort` makes the process abort as a
   * crashing decoder would; `hang` never answers, as a decoder stuck in a loop. Both reject.
   */
  diagnostic(mode: 'abort' | 'hang', deadline?: number): Promise<never> {
    return this.request({ op: mode }, deadline) as Promise<never>;
  }

  /** Ends the sandbox process; pending requests reject, later ones fail. Resolves once it has exited (and was reaped). */
  close(): Promise<void> {
    this.closed = true;
    const child = this.child;
    if (child === null || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      child.ref(); // an idle child is unref'd: keep the event loop up until its exit
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }

  /** Sends a request that gives up at `deadline` (epoch ms; default FINGERPRINT_TIMEOUT_MS from now, deadline.ts). */
  private request(body: RequestBody, deadlineGiven: number | undefined): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('the decoder sandbox is closed'));
    const deadline = deadlineOrDefault(deadlineGiven);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        // the process may be stuck in a decoder: it goes; the next request starts a new
        // one at once (not sent to this one while it dies). The other requests in it had
        // no part in that (one of a shorter deadline, such as a credentials read, may
        // have held the image decode queued behind it): they go to the new one.
        const p = this.settle(id);
        p?.reject(this.timeoutError());
        const stuck = p?.child;
        if (stuck && this.child === stuck) this.child = null;
        for (const [other, q] of this.pending) {
          if (q.child === stuck && q.resends++ < MAX_RESENDS && !this.closed) this.dispatch(other);
        }
        stuck?.kill('SIGKILL');
      }, msUntil(deadline));
      this.pending.set(id, { body, deadline, child: null, resends: 0, resolve, reject, timer });
      this.dispatch(id);
    });
  }

  /** Sends pending request `id` to the current process (started when there is none). */
  private dispatch(id: number): void {
    const p = this.pending.get(id)!;
    const child = this.child ?? this.start();
    p.child = child;
    this.hold(child, true);
    // the child stops by the request's deadline too (same clock: same machine)
    child.send({ id, deadline: p.deadline, ...p.body } as SandboxRequest, (err) => {
      if (!err || this.pending.get(id) !== p || p.child !== child) return; // answered, or sent elsewhere since
      // not delivered (the process is exiting): it had no part in that, so a new one gets it
      if (this.child === child) this.child = null;
      if (p.resends++ < MAX_RESENDS && !this.closed) this.dispatch(id);
      else this.settle(id)?.reject(new SandboxError('crashed', `cannot reach the decoder process: ${err.message}`));
    });
  }

  private start(): ChildProcess {
    const child = fork(compiledFile('src/media/sandbox-child.js'), [String(this.idleMs)], {
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      ...this.memoryLimit(),
    });
    this.child = child;
    child.on('message', (reply: SandboxReply) => {
      const p = this.settle(reply.id);
      if (!p) return;
      if (reply.ok) p.resolve(reply.value);
      else p.reject(p.body.op === 'image-hash' ? new ImageDecodeError(reply.error) : new Error(reply.error));
    });
    child.on('error', () => {}); // a failed spawn or send also ends in 'exit' or a send callback
    child.once('exit', (code, signal) => {
      if (this.child === child) this.child = null;
      // Code 0 is the child's idle exit, taken only with nothing received and unanswered:
      // requests sent meanwhile never reached it and go to a new process.
      const idleExit = code === 0 && signal === null && !this.closed;
      const why = signal ? `was ended by ${signal}` : `exited with code ${code}`;
      const mine = [...this.pending].filter(([, p]) => p.child === child);
      // the child ends itself at a request's deadline too, and may do so first: then the
      // others in it go to a new process, as when this side stops it (request())
      const overdue = mine.some(([, p]) => Date.now() >= p.deadline);
      for (const [id, p] of mine) {
        if (idleExit && p.resends++ < MAX_RESENDS) this.dispatch(id);
        else if (Date.now() >= p.deadline) this.settle(id)?.reject(this.timeoutError());
        else if (overdue && !this.closed && p.resends++ < MAX_RESENDS) this.dispatch(id);
        else this.settle(id)?.reject(new SandboxError('crashed', `the decoder process ${why} before answering`));
      }
    });
    return child;
  }

  private timeoutError(): SandboxError {
    return new SandboxError('timeout', 'the decoder process ran past its deadline and was stopped');
  }

  /**
   * How the process is started under its memory limit (memory-limit.ts): through
   * /bin/sh, which sets RLIMIT_DATA and then becomes node (exec: same pid, same IPC
   * channel). RLIMIT_DATA bounds what libvips and the codecs allocate, the kernel's
   * WebAssembly memory and V8's heap alike; a V8 heap limit would bound only the last.
   */
  private memoryLimit(): { execPath?: string; execArgv: string[] } {
    const script = memoryLimitScript(this.limitMb);
    if (script === null) return { execArgv: [] };
    return { execPath: '/bin/sh', execArgv: ['-c', script, process.execPath] };
  }

  /** Removes request `id` and its timer; returns it unless it was settled already. */
  private settle(id: number): Pending | undefined {
    const p = this.pending.get(id);
    if (!p) return undefined;
    this.pending.delete(id);
    clearTimeout(p.timer);
    if (this.pending.size === 0 && this.child) this.hold(this.child, false);
    return p;
  }

  /** An idle sandbox process does not keep its parent's event loop alive. */
  private hold(child: ChildProcess, busy: boolean): void {
    const channel = child.channel as { ref(): void; unref(): void } | undefined;
    if (busy) {
      child.ref();
      channel?.ref();
    } else {
      child.unref();
      channel?.unref();
    }
  }
}

/**
 * A file's Content Credentials read in `sandbox` by `timeoutMs` or `deadline` (epoch ms),
 * whichever comes first: present null saying why when stopped there (the sandbox
 * process is killed, so a read that would run on costs nothing more) or when the sandbox
 * failed otherwise. The pool's workers, the CLI and the vault read credentials this way.
 */
export async function credentialsWithin(sandbox: DecoderSandbox, bytes: Uint8Array, timeoutMs: number, deadline?: number): Promise<ContentCredentials> {
  try {
    return await sandbox.contentCredentials(bytes, Math.min(deadline ?? Infinity, Date.now() + timeoutMs));
  } catch (e) {
    if (e instanceof SandboxError && e.code === 'timeout') return { present: null, message: `not read: reading Content Credentials ran past its deadline (${timeoutMs} ms; docs/c2pa.md)` };
    return { present: null, message: `not read: ${(e instanceof Error ? e.message : String(e)).slice(0, 150)}` };
  }
}
