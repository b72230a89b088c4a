// The hashing entry points the service uses: file SHA-256 (verify-file, integrity,
// `provenant sha256`) and the webhook HMAC-SHA256 (X-Service-Signature).
//
// Each picks, by input size, whichever implementation measured faster on this
// machine class: our WebAssembly kernel has almost no per-call cost, so it wins on
// small inputs; node:crypto runs OpenSSL's SHA-256, which uses the CPU's SHA
// extensions (SHA-NI) where present, so it wins once the per-call overhead of building
// a node Hash / Hmac object is paid off. See docs/crypto.md for the measurements.
import { createHash, createHmac, type Hash } from 'node:crypto';
import { createSha256, sha256, sha256Hex, toHex } from './sha256.js';
import { hmacSha256, hmacSha256Hex } from './hmac.js';
import { wasmFlavor } from './wasm.js';

/**
 * Inputs of at most this many bytes are hashed by our kernel, longer ones by
 * node:crypto. From bench/sha256.bench.ts, crossover rows (2026-11-22, 2-core AMD EPYC
 * with SHA-NI, node 20.20, CPU time, best of two runs), ours/node:
 *   SIMD build:   2.58 at 128 B, 1.63 at 512 B, 1.46 at 640 B, 0.99 at 768 B, 0.96 at 1 KiB
 *   scalar build: 2.13 at 128 B, 1.05 at 512 B, 0.95 at 640 B, 0.92 at 768 B, 0.84 at 1 KiB
 * Above this, node's per-call overhead is paid off by SHA-NI.
 */
export const FILE_SHA256_WASM_MAX_BYTES: number = wasmFlavor === 'simd' ? 640 : 512;

/**
 * Messages of at most this many bytes are MACed by our kernel, longer ones by
 * node:crypto. From bench/hmac.bench.ts, crossover rows (same run), ours/node:
 *   SIMD build:   3.54 at 64 B, 1.71 at 512 B, 1.21 at 768 B, 1.13 at 1 KiB, 1.04 at 1280 B, 0.77 at 1536 B
 *   scalar build: 3.37 at 64 B, 1.65 at 512 B, 1.24 at 768 B, 1.08 at 1 KiB, 0.88 at 1280 B
 * Webhook bodies are mostly below this.
 */
export const HMAC_SHA256_WASM_MAX_BYTES = 1024;

/** SHA-256 of a whole file's bytes (32 bytes). */
export function fileSha256(bytes: Uint8Array): Uint8Array {
  if (bytes.length <= FILE_SHA256_WASM_MAX_BYTES) return sha256(bytes);
  const d = createHash('sha256').update(bytes).digest();
  return new Uint8Array(d.buffer, d.byteOffset, d.length);
}

/** SHA-256 of a whole file's bytes, as the 64 lower-case hex characters `file_hash` uses. */
export function fileSha256Hex(bytes: Uint8Array): string {
  if (bytes.length <= FILE_SHA256_WASM_MAX_BYTES) return sha256Hex(bytes);
  return createHash('sha256').update(bytes).digest('hex');
}

/** An incremental file hash (for uploads arriving in chunks). */
export interface FileHasher {
  update(chunk: Uint8Array): this;
  /** The digest of everything added; the hasher then starts over. */
  digest(): Uint8Array;
  digestHex(): string;
}

/**
 * The first FILE_SHA256_WASM_MAX_BYTES bytes are kept in a small buffer; a file that
 * ends there is hashed by our kernel, a longer one is handed to node:crypto (buffer
 * first) and streamed there. So each size gets the faster implementation without
 * knowing the size up front.
 */
class SizeSwitchingHasher implements FileHasher {
  private readonly head = new Uint8Array(FILE_SHA256_WASM_MAX_BYTES);
  private headLen = 0;
  private node: Hash | null = null;

  update(chunk: Uint8Array): this {
    if (this.node !== null) {
      this.node.update(chunk);
    } else if (this.headLen + chunk.length <= this.head.length) {
      this.head.set(chunk, this.headLen);
      this.headLen += chunk.length;
    } else {
      this.node = createHash('sha256').update(this.head.subarray(0, this.headLen)).update(chunk);
    }
    return this;
  }

  private finish(): Uint8Array {
    let out: Uint8Array;
    if (this.node !== null) {
      const d = this.node.digest();
      out = new Uint8Array(d.buffer, d.byteOffset, d.length);
    } else {
      out = createSha256().update(this.head.subarray(0, this.headLen)).digest();
    }
    this.node = null;
    this.headLen = 0;
    return out;
  }

  digest(): Uint8Array {
    return this.finish();
  }

  digestHex(): string {
    return toHex(this.finish());
  }
}

/** A new incremental file hasher; any number may be in use at once. */
export function createFileHasher(): FileHasher {
  return new SizeSwitchingHasher();
}

/** HMAC-SHA256 of `data` under `key`, as the service signs webhook bodies (32 bytes). */
export function hmacSha256ForService(key: Uint8Array | string, data: Uint8Array | string): Uint8Array {
  if (byteLengthAtMost(data, HMAC_SHA256_WASM_MAX_BYTES)) return hmacSha256(key, data);
  const d = createHmac('sha256', key).update(data).digest();
  return new Uint8Array(d.buffer, d.byteOffset, d.length);
}

/** As hmacSha256ForService, in lower-case hex (the X-Service-Signature header value). */
export function hmacSha256HexForService(key: Uint8Array | string, data: Uint8Array | string): string {
  if (byteLengthAtMost(data, HMAC_SHA256_WASM_MAX_BYTES)) return hmacSha256Hex(key, data);
  return createHmac('sha256', key).update(data).digest('hex');
}

/** Whether `data` is at most `max` bytes (strings as UTF-8), without encoding it. */
function byteLengthAtMost(data: Uint8Array | string, max: number): boolean {
  if (typeof data !== 'string') return data.length <= max;
  if (data.length * 3 <= max) return true;
  return data.length <= max && Buffer.byteLength(data, 'utf8') <= max;
}
