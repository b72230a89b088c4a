// HMAC-SHA256 (RFC 2104) over the WebAssembly kernel (assembly/hmac.ts).
//
// A keyed object derives the key's inner and outer SHA-256 midstates once; each
// message then costs its own blocks plus one outer block, and `mac(data)` is a single
// kernel call. The one-shot `hmacSha256` keeps the midstates of the last key it saw
// inside the kernel, so signing many messages with one secret skips the key blocks too.
// Keyed objects share one context slot the way SHA-256 hashers do (see sha256.ts).
import { digestHexAt, feed, hashIo, mem, sha256, stage, type HashIo } from './sha256.js';

const encoder = new TextEncoder();

/** The key as bytes of at most one block: longer keys are replaced by their SHA-256 (RFC 2104 section 2). */
function blockKey(key: Uint8Array | string): Uint8Array {
  const bytes = typeof key === 'string' ? encoder.encode(key) : key;
  return bytes.length > 64 ? sha256(bytes) : bytes;
}

/** Leaves HMAC-SHA256(key, data) at `k.out`. */
function macInto(k: HashIo, key: Uint8Array | string, data: Uint8Array | string): void {
  const kb = blockKey(key);
  const n = stage(k, data);
  if (n >= 0) {
    // key and message both already in wasm memory: one kernel call
    mem(k).set(kb, k.key);
    k.ex.hmacSha256Digest(k.key, kb.length, k.input, n, k.out);
    return;
  }
  const ctx = k.hmacBig;
  mem(k).set(kb, k.key);
  k.ex.hmacSha256Init(ctx, k.key, kb.length);
  feed(k, data, (ptr, len) => k.ex.hmacSha256Update(ctx, ptr, len));
  k.ex.hmacSha256Final(ctx, k.out);
}

/** HMAC-SHA256 of `data` under `key` (any length; strings as UTF-8). */
export function hmacSha256(key: Uint8Array | string, data: Uint8Array | string): Uint8Array {
  const k = hashIo();
  macInto(k, key, data);
  return mem(k).slice(k.out, k.out + 32);
}

/** As hmacSha256, in lower-case hex. */
export function hmacSha256Hex(key: Uint8Array | string, data: Uint8Array | string): string {
  const k = hashIo();
  macInto(k, key, data);
  return digestHexAt(k, k.out);
}

/** An HMAC-SHA256 bound to one key. */
export interface HmacSha256 {
  /** Adds message bytes (strings as UTF-8); chunks may have any length. */
  update(chunk: Uint8Array | string): this;
  /** The MAC of everything added since creation or the last digest; then starts a new message under the same key. */
  digest(): Uint8Array;
  /** As digest(), in lower-case hex. */
  digestHex(): string;
  /** The MAC of `data` alone, in one kernel call (anything added with update() is dropped). */
  mac(data: Uint8Array | string): Uint8Array;
}

let hmacSlotOwner: KeyedHmac | null = null;

class KeyedHmac implements HmacSha256 {
  /** This object's context (midstates included) while another one holds the slot. */
  private saved: Uint8Array | null = null;
  private readonly k: HashIo;
  private readonly updateSlot = (ptr: number, len: number): void => this.k.ex.hmacSha256Update(this.k.hmacSlot, ptr, len);

  constructor(key: Uint8Array | string) {
    const k = hashIo();
    this.k = k;
    const kb = blockKey(key);
    this.evictOwner();
    mem(k).set(kb, k.key);
    k.ex.hmacSha256Init(k.hmacSlot, k.key, kb.length);
    hmacSlotOwner = this;
  }

  private evictOwner(): void {
    const k = this.k;
    if (hmacSlotOwner !== null && hmacSlotOwner !== this) {
      hmacSlotOwner.saved = mem(k).slice(k.hmacSlot, k.hmacSlot + k.hmacCtxSize);
    }
  }

  private acquire(): void {
    if (hmacSlotOwner === this) return;
    this.evictOwner();
    mem(this.k).set(this.saved!, this.k.hmacSlot);
    this.saved = null;
    hmacSlotOwner = this;
  }

  update(chunk: Uint8Array | string): this {
    this.acquire();
    feed(this.k, chunk, this.updateSlot);
    return this;
  }

  digest(): Uint8Array {
    this.acquire();
    const k = this.k;
    k.ex.hmacSha256Final(k.hmacSlot, k.out);
    return mem(k).slice(k.out, k.out + 32);
  }

  digestHex(): string {
    this.acquire();
    const k = this.k;
    k.ex.hmacSha256Final(k.hmacSlot, k.out);
    return digestHexAt(k, k.out);
  }

  mac(data: Uint8Array | string): Uint8Array {
    this.acquire();
    const k = this.k;
    const n = stage(k, data);
    if (n >= 0) {
      k.ex.hmacSha256Mac(k.hmacSlot, k.input, n, k.out);
    } else {
      k.ex.hmacSha256Reset(k.hmacSlot);
      feed(k, data, this.updateSlot);
      k.ex.hmacSha256Final(k.hmacSlot, k.out);
    }
    return mem(k).slice(k.out, k.out + 32);
  }
}

/** A new HMAC-SHA256 keyed with `key` (any length; strings as UTF-8); any number may be in use at once. */
export function createHmacSha256(key: Uint8Array | string): HmacSha256 {
  return new KeyedHmac(key);
}
