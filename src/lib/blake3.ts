// BLAKE3 over the WebAssembly kernel (assembly/iscc/blake3.ts), the hash of the ISCC
// Instance-Code: the unkeyed hash with its 32-byte output.
//
// Input goes through one long-lived block of the iscc module (taken once with `alloc`):
// at most SLICE bytes per kernel call, so hashing a 4 GiB file needs 256 KiB of wasm
// memory. A one-shot digest of up to SLICE bytes is one copy in, one kernel call and one
// 32-byte copy out. SLICE is larger than SHA-256's because the kernel hashes four chunks
// at once but keeps a call's last chunk open (it may be the root): per slice, about four
// of its 256 chunks take the one-block path.
//
// Streaming hashers share one context slot as SHA-256's do (src/lib/sha256.ts): the
// hasher that last used the slot keeps it; another that needs it saves the holder's
// context into the holder's own JS buffer first.
import { loadKernel, type BaseExports, type Kernel } from './wasm-core.js';

/** The iscc module's BLAKE3 exports. */
export interface Blake3Exports extends BaseExports {
  blake3Init(ctx: number): void;
  blake3Update(ctx: number, ptr: number, len: number): void;
  blake3Final(ctx: number, out: number): void;
  blake3Digest(ptr: number, len: number, out: number): void;
  blake3ContextSize(): number;
}

/** Bytes handed to the kernel per call. */
export const BLAKE3_SLICE = 256 * 1024;
/** Bytes of a BLAKE3 digest as the Instance-Code takes it. */
export const BLAKE3_BYTES = 32;

interface Io {
  readonly kernel: Kernel<Blake3Exports>;
  readonly ex: Blake3Exports;
  readonly out: number;
  readonly slot: number;
  readonly big: number;
  readonly input: number;
  readonly ctxSize: number;
  /** The input area as a view; re-made when the memory grew (a detached view has length 0). */
  inputView: Uint8Array;
}

let io: Io | undefined;

function blake3Io(): Io {
  if (io !== undefined) return io;
  const kernel = loadKernel<Blake3Exports>('iscc');
  const ex = kernel.exports;
  const ctxSize = ex.blake3ContextSize();
  const out = ex.alloc(BLAKE3_BYTES + 2 * ctxSize + BLAKE3_SLICE);
  const slot = out + BLAKE3_BYTES;
  const big = slot + ctxSize;
  const input = big + ctxSize;
  io = { kernel, ex, out, slot, big, input, ctxSize, inputView: new Uint8Array(ex.memory.buffer, input, BLAKE3_SLICE) };
  return io;
}

function area(k: Io): Uint8Array {
  if (k.inputView.length === 0) k.inputView = new Uint8Array(k.ex.memory.buffer, k.input, BLAKE3_SLICE);
  return k.inputView;
}

function checkBytes(data: unknown): asserts data is Uint8Array {
  if (!(data instanceof Uint8Array)) throw new TypeError('blake3: input must be a Uint8Array');
}

/** Feeds `data` to `ctx` through the input area, SLICE bytes per call. */
function feed(k: Io, ctx: number, data: Uint8Array): void {
  const n = data.length;
  for (let off = 0; off < n; off += BLAKE3_SLICE) {
    const len = Math.min(BLAKE3_SLICE, n - off);
    area(k).set(len === n ? data : data.subarray(off, off + len));
    k.ex.blake3Update(ctx, k.input, len);
  }
}

/** BLAKE3 of `data`: 32 bytes. */
export function blake3(data: Uint8Array): Uint8Array {
  checkBytes(data);
  const k = io ?? blake3Io();
  if (data.length <= BLAKE3_SLICE) {
    area(k).set(data);
    k.ex.blake3Digest(k.input, data.length, k.out);
  } else {
    k.ex.blake3Init(k.big);
    feed(k, k.big, data);
    k.ex.blake3Final(k.big, k.out);
  }
  return k.kernel.read(k.out, BLAKE3_BYTES);
}

/** An incremental BLAKE3. */
export interface Blake3Hasher {
  /** Adds bytes; chunks may have any length. */
  update(chunk: Uint8Array): this;
  /** The digest of everything added since creation or the last digest; the hasher then starts over. */
  digest(): Uint8Array;
}

let slotOwner: StreamingBlake3 | null = null;

class StreamingBlake3 implements Blake3Hasher {
  /** This hasher's context while another holds the slot; null when fresh or holding it. */
  private saved: Uint8Array | null = null;
  private readonly k = blake3Io();

  private acquire(): void {
    if (slotOwner === this) return;
    const k = this.k;
    if (slotOwner !== null) slotOwner.saved = k.kernel.read(k.slot, k.ctxSize);
    if (this.saved === null) k.ex.blake3Init(k.slot);
    else k.kernel.u8.set(this.saved, k.slot);
    this.saved = null;
    slotOwner = this;
  }

  update(chunk: Uint8Array): this {
    checkBytes(chunk);
    this.acquire();
    feed(this.k, this.k.slot, chunk);
    return this;
  }

  digest(): Uint8Array {
    this.acquire();
    this.k.ex.blake3Final(this.k.slot, this.k.out);
    slotOwner = null; // the slot holds nothing of ours now: the next use starts fresh
    return this.k.kernel.read(this.k.out, BLAKE3_BYTES);
  }
}

/** A new incremental BLAKE3; any number may be in use at once. */
export function createBlake3(): Blake3Hasher {
  return new StreamingBlake3();
}
