// SHA-256 over the WebAssembly kernel (assembly/sha256.ts).
//
// Input goes through one long-lived block of the core module (taken once with
// `alloc`): at most SLICE bytes per kernel call, so hashing 50 MiB needs 64 KiB of wasm
// memory, not 50 MiB. A one-shot digest of up to SLICE bytes is one copy in, one
// kernel call and one 32-byte copy out.
//
// Streaming hashers share one context slot in wasm memory. The hasher that last used
// the slot keeps it; another hasher that needs it first saves the holder's 104-byte
// context into the holder's own JS buffer and restores its own. So any number of
// hashers can be interleaved, and the usual case (one hasher at a time) copies nothing.
import { loadKernel, type BaseExports, type Kernel } from './wasm-core.js';

/** The core module's SHA-256 and HMAC-SHA256 exports (assembly/sha256.ts, assembly/hmac.ts). */
export interface HashExports extends BaseExports {
  sha256Init(ctx: number): void;
  sha256Update(ctx: number, ptr: number, len: number): void;
  sha256Final(ctx: number, out: number): void;
  sha256Digest(ptr: number, len: number, out: number): void;
  sha256ContextSize(): number;
  hmacSha256Init(ctx: number, key: number, keyLen: number): void;
  hmacSha256Reset(ctx: number): void;
  hmacSha256Update(ctx: number, ptr: number, len: number): void;
  hmacSha256Final(ctx: number, out: number): void;
  hmacSha256Mac(ctx: number, ptr: number, len: number, out: number): void;
  hmacSha256Digest(key: number, keyLen: number, msg: number, msgLen: number, out: number): void;
  hmacSha256ContextSize(): number;
}

/** Bytes handed to the kernel per call. */
export const SLICE = 64 * 1024;
/** Room before the input area for an HMAC key (keys longer than a block are hashed first). */
const KEY_ROOM = 64;

/** Pointers into the one block this module owns in the core module's memory. */
export interface HashIo {
  readonly kernel: Kernel<HashExports>;
  readonly ex: HashExports;
  /** A byte view of the whole memory; use mem(), which re-makes it after growth. */
  u8: Uint8Array;
  /** 32-byte digest output. */
  readonly out: number;
  /** The streaming SHA-256 slot and the context of long one-shot inputs. */
  readonly shaSlot: number;
  readonly shaBig: number;
  /** The streaming HMAC slot and the context of long one-shot HMAC inputs. */
  readonly hmacSlot: number;
  readonly hmacBig: number;
  /** KEY_ROOM bytes for a key, directly followed by the SLICE-byte input area. */
  readonly key: number;
  readonly input: number;
  readonly shaCtxSize: number;
  readonly hmacCtxSize: number;
}

let io: HashIo | undefined;

/** The shared kernel block, made on first use (so importing never loads WebAssembly). */
export function hashIo(): HashIo {
  if (io !== undefined) return io;
  const kernel = loadKernel<HashExports>('core');
  const ex = kernel.exports;
  const shaCtxSize = ex.sha256ContextSize();
  const hmacCtxSize = ex.hmacSha256ContextSize();
  const base = ex.alloc(32 + 2 * shaCtxSize + 2 * hmacCtxSize + KEY_ROOM + SLICE);
  const out = base;
  const shaSlot = out + 32;
  const shaBig = shaSlot + shaCtxSize;
  const hmacSlot = shaBig + shaCtxSize;
  const hmacBig = hmacSlot + hmacCtxSize;
  const key = hmacBig + hmacCtxSize;
  io = { kernel, ex, u8: new Uint8Array(ex.memory.buffer), out, shaSlot, shaBig, hmacSlot, hmacBig, key, input: key + KEY_ROOM, shaCtxSize, hmacCtxSize };
  return io;
}

/**
 * The memory as bytes. Growing a WebAssembly memory detaches its old buffer, which
 * leaves views on it with length 0: checking that is cheaper than reading
 * `memory.buffer` on every call.
 */
export function mem(k: HashIo): Uint8Array {
  if (k.u8.length === 0) k.u8 = new Uint8Array(k.ex.memory.buffer);
  return k.u8;
}

const encoder = new TextEncoder();
let inputView: Uint8Array | undefined;

/** The input area as a view, re-made when the memory grew. */
function inputArea(k: HashIo): Uint8Array {
  if (inputView === undefined || inputView.length === 0) inputView = new Uint8Array(k.ex.memory.buffer, k.input, SLICE);
  return inputView;
}

/**
 * Feeds `data` through the input area to `update(ptr, len)` in slices of at most SLICE
 * bytes. Strings are encoded as UTF-8 straight into wasm memory.
 */
export function feed(k: HashIo, data: Uint8Array | string, update: (ptr: number, len: number) => void): void {
  if (typeof data === 'string') {
    let rest = data;
    while (rest.length > 0) {
      const { read, written } = encoder.encodeInto(rest, inputArea(k));
      update(k.input, written);
      rest = rest.slice(read);
    }
    return;
  }
  const n = data.length;
  for (let off = 0; off < n; off += SLICE) {
    const len = Math.min(SLICE, n - off);
    mem(k).set(len === n ? data : data.subarray(off, off + len), k.input);
    update(k.input, len);
  }
}

/**
 * Writes `data` to the input area when it fits in one slice and returns its length
 * there, else returns -1 (the caller streams it). Strings of up to SLICE / 3 UTF-16
 * units always fit.
 */
export function stage(k: HashIo, data: Uint8Array | string): number {
  if (typeof data === 'string') {
    if (data.length * 3 > SLICE) return -1;
    return encoder.encodeInto(data, inputArea(k)).written;
  }
  const n = data.length;
  if (n > SLICE) return -1;
  mem(k).set(data, k.input);
  return n;
}

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** Lower-case hex of the 32-byte digest at `ptr`. */
export function digestHexAt(k: HashIo, ptr: number): string {
  const u8 = mem(k);
  let s = '';
  for (let i = ptr; i < ptr + 32; i++) s += HEX[u8[i]];
  return s;
}

/** Lower-case hex of any bytes. */
export function toHex(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i++) s += HEX[bytes[i]];
  return s;
}

/** Leaves the SHA-256 digest of `data` at `k.out`. */
function digestInto(k: HashIo, data: Uint8Array | string): void {
  const n = stage(k, data);
  if (n >= 0) {
    k.ex.sha256Digest(k.input, n, k.out);
    return;
  }
  const ctx = k.shaBig;
  k.ex.sha256Init(ctx);
  feed(k, data, (ptr, len) => k.ex.sha256Update(ctx, ptr, len));
  k.ex.sha256Final(ctx, k.out);
}

/** SHA-256 of `data` (strings are hashed as UTF-8). */
export function sha256(data: Uint8Array | string): Uint8Array {
  const k = io ?? hashIo();
  digestInto(k, data);
  return mem(k).slice(k.out, k.out + 32);
}

/** SHA-256 of `data` as 64 lower-case hex characters. */
export function sha256Hex(data: Uint8Array | string): string {
  const k = io ?? hashIo();
  digestInto(k, data);
  return digestHexAt(k, k.out);
}

/** An incremental SHA-256. */
export interface Sha256Hasher {
  /** Adds bytes (strings as UTF-8); chunks may have any length. */
  update(chunk: Uint8Array | string): this;
  /** The digest of everything added since creation or the last digest; the hasher then starts over. */
  digest(): Uint8Array;
  /** As digest(), in lower-case hex. */
  digestHex(): string;
}

let shaSlotOwner: StreamingSha256 | null = null;

class StreamingSha256 implements Sha256Hasher {
  /** This hasher's context while another one holds the slot; null when fresh or holding it. */
  private saved: Uint8Array | null = null;
  private readonly k: HashIo;
  private readonly updateSlot = (ptr: number, len: number): void => this.k.ex.sha256Update(this.k.shaSlot, ptr, len);

  constructor() {
    this.k = hashIo();
  }

  /** Moves the slot's holder out to its JS buffer and this hasher's context in. */
  private acquire(): void {
    if (shaSlotOwner === this) return;
    const k = this.k;
    if (shaSlotOwner !== null) shaSlotOwner.saved = mem(k).slice(k.shaSlot, k.shaSlot + k.shaCtxSize);
    if (this.saved === null) k.ex.sha256Init(k.shaSlot);
    else mem(k).set(this.saved, k.shaSlot);
    this.saved = null;
    shaSlotOwner = this;
  }

  update(chunk: Uint8Array | string): this {
    this.acquire();
    feed(this.k, chunk, this.updateSlot);
    return this;
  }

  private finish(): void {
    this.acquire();
    this.k.ex.sha256Final(this.k.shaSlot, this.k.out);
    shaSlotOwner = null; // the slot holds nothing of ours now; next use starts fresh
  }

  digest(): Uint8Array {
    this.finish();
    return mem(this.k).slice(this.k.out, this.k.out + 32);
  }

  digestHex(): string {
    this.finish();
    return digestHexAt(this.k, this.k.out);
  }
}

/** A new incremental SHA-256; any number may be in use at once. */
export function createSha256(): Sha256Hasher {
  return new StreamingSha256();
}
