// The worker pool (decisions.md 1.2): Piscina threads that run the task files of
// workers/ from their compiled JS (dist/workers/<name>.js), with a hard deadline per
// task, a bounded queue, and a crash boundary: a task that hangs, crashes or runs out
// of memory fails alone, and Piscina replaces its worker for the next task; native
// image decoders run in each worker's decoder sandbox process (src/media/worker-sandbox.ts).
import { availableParallelism } from 'node:os';
import type { TransferListItem } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { compiledFile } from '../lib/wasm.js';
import { FINGERPRINT_TIMEOUT_MS, msUntil } from '../media/deadline.js';
import { FingerprintError, type FingerprintOutcome } from '../media/errors.js';
import type { Examination } from '../media/examine.js';
import type { PoolWorkerData } from '../media/worker-sandbox.js';
import type { Fingerprint } from '../lib/types.js';
import type { ContentCredentials } from '../lib/content-credentials.js';

export interface FingerprintPoolOptions {
  /** Worker threads (default $PROVENANT_WORKERS, else the number of CPUs). */
  workers?: number;
  /** Time limit per task in ms, counted from submission (default FINGERPRINT_TIMEOUT_MS, 60 s): each task gets its deadline from it, and its worker is terminated at that deadline. */
  taskTimeoutMs?: number;
  /** Tasks waiting beyond the running ones before PoolBusyError (default 16 per worker). */
  maxQueue?: number;
  /** Heap limit per worker in MB (default 1024): a runaway decoder fails its task only. */
  maxHeapMb?: number;
  /** A worker's decoder sandbox (src/media/sandbox.ts) ends after this long idle, in ms (default 10000). */
  decoderIdleMs?: number;
  /** Memory limit of each worker's decoder sandbox in MB (default SANDBOX_DEFAULT_MEMORY_MB, 1280; null: none). */
  decoderMemoryMb?: number | null;
  /** Time limit of examine()'s Content Credentials read in ms (default CREDENTIALS_TIMEOUT_MS, 10 s), within the task's. */
  credentialsTimeoutMs?: number;
}

export interface ExamineOptions {
  /** Read the file's Content Credentials beside its fingerprints (default true). */
  credentials?: boolean;
}

export interface FingerprintPool {
  /**
   * The fingerprint of a file's bytes, as fingerprintFile's (null: not a supported media
   * type; FingerprintError decode_failed: the decoder refused or crashed on them), or
   * PoolTimeoutError at the deadline. The bytes' ArrayBuffer is transferred (detached)
   * when it is theirs alone, else exactly the bytes are copied.
   */
  fingerprint(bytes: Uint8Array): Promise<Fingerprint | null>;
  /**
   * The file's Examination (src/media/examine.ts: every fingerprint its kind has, from
   * one decode for an image) and its Content Credentials (C2PA), from one task under one
   * deadline (issue 21): a file the decoders refuse has null fingerprints and `failure`
   * saying why, and its credentials still read, since an unsupported or unreadable file
   * can carry them; the deadline is PoolTimeoutError as for fingerprint(). The
   * credentials read has a shorter deadline of its own (credentialsTimeoutMs): past it,
   * content_credentials is present null saying so, and the fingerprints answer.
   */
  examine(bytes: Uint8Array, options?: { credentials?: true }): Promise<Examination & { content_credentials: ContentCredentials }>;
  examine(bytes: Uint8Array, options: ExamineOptions): Promise<Examination>;
  /** Runs the task file dist/workers/<taskName>.js with `payload`. */
  run<R = unknown>(taskName: string, payload: unknown, transferList?: TransferListItem[]): Promise<R>;
  /** Tasks waiting for a worker. */
  readonly queueSize: number;
  /** Worker threads running now (idle ones end after 30 s; at least one stays). */
  readonly threads: number;
  /** Waits for running tasks, then ends the workers. */
  close(): Promise<void>;
}

export class PoolError extends Error {
  override name = 'PoolError';
  constructor(readonly code: 'timeout' | 'busy' | 'failed' | 'closed', message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The task ran past its deadline; its worker was terminated. */
export class PoolTimeoutError extends PoolError {
  override name = 'PoolTimeoutError';
  declare readonly code: 'timeout';
  constructor(taskName: string, ms: number) {
    super('timeout', `${taskName} task ran past its ${ms} ms deadline and was stopped`);
  }
}

/** The queue is full; nothing was started. */
export class PoolBusyError extends PoolError {
  override name = 'PoolBusyError';
  declare readonly code: 'busy';
  constructor() {
    super('busy', 'the worker pool queue is full; try again later');
  }
}

/** The task threw, or its worker crashed or ran out of memory. */
export class PoolTaskError extends PoolError {
  override name = 'PoolTaskError';
  declare readonly code: 'failed';
  constructor(taskName: string, cause: unknown) {
    super('failed', `${taskName} task failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** Bounds of PROVENANT_WORKERS. */
export const WORKERS_MIN = 1;
export const WORKERS_MAX = 256;

/**
 * PROVENANT_WORKERS, the one parser of it (the pool's default, the server's config, the
 * bench command): an integer from 1 to 256; unset or empty, the number of CPUs. A
 * RangeError naming the variable otherwise.
 */
export function workersFromEnv(text: string | undefined = process.env.PROVENANT_WORKERS): number {
  if (text === undefined || text === '') return Math.max(WORKERS_MIN, availableParallelism());
  if (!/^\d+$/.test(text) || Number(text) < WORKERS_MIN || Number(text) > WORKERS_MAX) {
    throw new RangeError(`PROVENANT_WORKERS must be an integer from ${WORKERS_MIN} to ${WORKERS_MAX}, not "${text}"`);
  }
  return Number(text);
}

function defaultWorkers(): number {
  return workersFromEnv();
}

const TASK_NAME = /^[a-z][a-z0-9-]*$/;

/** dist/workers/<name>.js under the package root; a clear error when it was not compiled. */
export function compiledWorkerFile(name: string): string {
  if (!TASK_NAME.test(name)) throw new RangeError(`bad task name "${name}"`);
  return compiledFile(`workers/${name}.js`);
}

/**
 * An ArrayBuffer of exactly the view's bytes that can be transferred: the view's own
 * when it spans all of it, else a copy of those bytes. A small Buffer (Buffer.from,
 * allocUnsafe and concat under 4 KiB) is a view of Node's shared 8 KiB pool, which
 * holds other requests' bytes; Buffer's slice() is a view too, not a copy, so the
 * copy is made by the Uint8Array constructor.
 */
function ownBuffer(bytes: Uint8Array): ArrayBuffer {
  const b = bytes.buffer;
  if (b instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === b.byteLength) return b;
  return new Uint8Array(bytes).buffer;
}

export function createFingerprintPool(options: FingerprintPoolOptions = {}): FingerprintPool {
  const workers = options.workers ?? defaultWorkers();
  const timeoutMs = options.taskTimeoutMs ?? FINGERPRINT_TIMEOUT_MS;
  const files = new Map<string, string>();
  const fileFor = (name: string) => {
    let f = files.get(name);
    if (f === undefined) files.set(name, (f = compiledWorkerFile(name)));
    return f;
  };
  const piscina = new Piscina({
    filename: fileFor('fingerprint'),
    minThreads: Math.min(1, workers),
    maxThreads: workers,
    maxQueue: options.maxQueue ?? 16 * workers,
    // Idle workers keep their event loop running, so that they reap their decoder
    // sandbox when it ends idle (Piscina's default blocks an idle worker in
    // Atomics.wait: an ended sandbox stayed a zombie, and one whose worker was then
    // terminated for idleness stayed one for good). Tasks here take milliseconds at
    // least, so the message-port hand-off costs nothing measurable.
    atomics: 'disabled',
    // a worker idle this long ends; its sandbox ended before (decoderIdleMs, 10 s)
    idleTimeout: 30_000,
    workerData: { decoderIdleMs: options.decoderIdleMs, decoderMemoryMb: options.decoderMemoryMb, credentialsTimeoutMs: options.credentialsTimeoutMs } satisfies PoolWorkerData,
    resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb ?? 1024 },
  });
  let closed = false;

  /** Runs a task that is stopped at `deadline` (epoch ms), set once at submission. */
  async function runBy<R>(taskName: string, payload: unknown, deadline: number, transferList?: TransferListItem[]): Promise<R> {
    if (closed) throw new PoolError('closed', 'the worker pool is closed');
    const filename = fileFor(taskName);
    if (piscina.queueSize >= piscina.options.maxQueue) throw new PoolBusyError();
    const abort = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort();
    }, msUntil(deadline));
    try {
      return (await piscina.run(payload, { filename, signal: abort.signal, transferList: transferList as never })) as R;
    } catch (e) {
      if (timedOut) throw new PoolTimeoutError(taskName, timeoutMs);
      if (e instanceof Error && e.message === 'Task queue is at limit') throw new PoolBusyError();
      throw new PoolTaskError(taskName, e);
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    async fingerprint(bytes: Uint8Array): Promise<Fingerprint | null> {
      const buffer = ownBuffer(bytes);
      // one deadline: the pool stops the task at it, the worker's decoders a little before (workers/fingerprint.ts)
      const deadline = Date.now() + timeoutMs;
      const outcome = await runBy<FingerprintOutcome>('fingerprint', { buffer, deadline }, deadline, [buffer]);
      if ('fingerprint' in outcome) return outcome.fingerprint;
      // the worker stops its decoders just before this deadline, and says so: the same timeout
      if (outcome.failure === 'timeout') throw new PoolTimeoutError('fingerprint', timeoutMs);
      throw new FingerprintError(outcome.failure, outcome.message);
    },
    async examine(bytes: Uint8Array, options: ExamineOptions = {}): Promise<Examination & { content_credentials: ContentCredentials }> {
      const buffer = ownBuffer(bytes);
      const deadline = Date.now() + timeoutMs;
      const credentials = options.credentials !== false;
      const found = await runBy<Examination>('fingerprint', { buffer, deadline, examine: true, credentials }, deadline, [buffer]);
      if (found.failure?.code === 'timeout') throw new PoolTimeoutError('fingerprint', timeoutMs);
      if (!credentials) return found as Examination & { content_credentials: ContentCredentials }; // the second overload: none asked for
      return { ...found, content_credentials: found.content_credentials ?? { present: null, message: 'not read' } };
    },
    run<R>(taskName: string, payload: unknown, transferList?: TransferListItem[]): Promise<R> {
      return runBy<R>(taskName, payload, Date.now() + timeoutMs, transferList);
    },
    get queueSize() {
      return piscina.queueSize;
    },
    get threads() {
      return piscina.threads.length;
    },
    async close() {
      closed = true;
      // Each worker ends and reaps its decoder sandbox first (one task per live worker:
      // Piscina hands them to distinct idle workers); a sandbox left to a terminated
      // worker would end as a zombie. Best effort, 5 s at most: close goes on whatever
      // they answer, and without them when release.js was not compiled.
      let filename: string | null = null;
      try {
        filename = fileFor('release');
      } catch {
        // not compiled: the workers end without it
      }
      if (filename !== null) {
        const options = { filename, signal: AbortSignal.timeout(5000) };
        await Promise.allSettled(piscina.threads.map(() => piscina.run(null, options)));
      }
      await piscina.close();
    },
  };
}
