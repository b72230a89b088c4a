// Bounds on a C2PA manifest store, checked before the reader parses it (issue 25 item
// 15). The reader's work grows with the square of the assertions (validly signed
// manifests from our own writer: 1,000 assertions read in 0.34 s, 2,000 in 1.25 s,
// 10,000 in 38 s), so a few uploads could hold every worker for a minute. A structural
// walk of the JUMBF boxes (ISO 19566-5: sizes and the description boxes' type and
// label; no CBOR, no hashing, no signature), linear in their bytes, counts the store's
// manifests, assertions, ingredients, depth and bytes first; a store past any of
// C2PA_LIMITS is not given to the reader at all (c2pa.ts says which limit it passed).
//
// Where the store is, per container: JPEG splits it over APP11 segments (reassembled as
// the reader does: by box instance, in sequence order, each continuation's repeated box
// header dropped); GIF over the data sub-blocks of its C2PA_GIF application extension;
// every other format the reader takes (PNG caBX, RIFF C2PA chunks, the MP4 uuid box,
// TIFF's tag, MP3's GEOB frame) holds it whole, found by its description box (the
// `c2pa` UUID), every occurrence counted.
import type { MediaFormat } from '../lib/detect.js';

/** What a manifest store may hold to be read (docs/c2pa.md). */
export const C2PA_LIMITS = {
  /** Assertions over all the store's manifests (a camera or an editor writes tens). */
  maxAssertions: 1000,
  /** Ingredient assertions over all manifests. */
  maxIngredients: 100,
  /** Manifests in the store (the active one and its ingredients'). */
  maxManifests: 100,
  /** Nesting of JUMBF superboxes (a store nests 4 deep: store, manifest, assertion store, assertion). */
  maxDepth: 8,
  /** Bytes of JUMBF in all (thumbnails included). */
  maxBytes: 32 << 20,
} as const;

export interface ManifestStoreSize {
  /** Manifest stores found. */
  stores: number;
  bytes: number;
  manifests: number;
  assertions: number;
  ingredients: number;
  /** Deepest superbox nesting seen. */
  depth: number;
}

/** The `c2pa` UUID of a manifest store's description box (C2PA 2.x, 11.1.4): 63327061-0011-0010-8000-00AA00389B71. */
const STORE_UUID = Uint8Array.from([0x63, 0x32, 0x70, 0x61, 0x00, 0x11, 0x00, 0x10, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71]);
const STORE_SIGNATURE = Buffer.concat([Buffer.from('jumd'), STORE_UUID]);

class OverLimit extends Error {}

const u32 = (b: Uint8Array, o: number) => ((b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]) >>> 0;
const type4 = (b: Uint8Array, o: number) => String.fromCharCode(b[o], b[o + 1], b[o + 2], b[o + 3]);

/** The UUID's first four bytes as text (c2pa, c2ma, c2as, ...) and the label of the description box at `o`, or null. */
function description(b: Uint8Array, o: number, end: number): { kind: string; label: string } | null {
  if (o + 8 + 17 > end || type4(b, o + 4) !== 'jumd') return null;
  const kind = type4(b, o + 8);
  const toggles = b[o + 24];
  let label = '';
  if (toggles & 0x02) {
    const size = Math.min(end, o + u32(b, o));
    let i = o + 25;
    while (i < size && b[i] !== 0 && i - (o + 25) < 256) i++;
    label = Buffer.from(b.buffer, b.byteOffset + o + 25, i - (o + 25)).toString('latin1');
  }
  return { kind, label };
}

/** Walks the boxes in [start, end) of `b`, counting into `size`; `parent` is the enclosing superbox's kind. */
function walk(b: Uint8Array, start: number, end: number, depth: number, parent: string, size: ManifestStoreSize): void {
  for (let o = start; o + 8 <= end;) {
    let length = u32(b, o);
    let header = 8;
    if (length === 1) {
      if (o + 16 > end) return;
      length = u32(b, o + 8) * 2 ** 32 + u32(b, o + 12);
      header = 16;
    } else if (length === 0) {
      length = end - o;
    }
    if (length < header || o + length > end) return; // malformed: the reader refuses it, cheaply
    if (type4(b, o + 4) === 'jumb') {
      const d = description(b, o + header, o + length);
      if (depth + 1 > size.depth) size.depth = depth + 1;
      if (size.depth > C2PA_LIMITS.maxDepth) throw new OverLimit();
      if (parent === 'c2pa') size.manifests++;
      if (parent === 'c2as') {
        size.assertions++;
        if (d?.label.startsWith('c2pa.ingredient')) size.ingredients++;
      }
      if (size.manifests > C2PA_LIMITS.maxManifests || size.assertions > C2PA_LIMITS.maxAssertions || size.ingredients > C2PA_LIMITS.maxIngredients) throw new OverLimit();
      walk(b, o + header, o + length, depth + 1, d?.kind ?? '', size);
    }
    o += length;
  }
}

/** JPEG: the JUMBF of each APP11 box instance, reassembled (ISO 19566-5 annex, as c2pa-rs reads them). */
function jpegStores(b: Uint8Array): Uint8Array[] {
  const parts = new Map<number, { z: number; data: Uint8Array }[]>();
  for (let o = 2; o + 4 <= b.length;) {
    if (b[o] !== 0xff) break;
    const marker = b[o + 1];
    if (marker === 0xff) { o++; continue; }
    if (marker === 0xd9 || marker === 0xda) break; // the image data: no more metadata segments
    if (marker >= 0xd0 && marker <= 0xd8) { o += 2; continue; }
    const length = (b[o + 2] << 8) | b[o + 3];
    const seg = b.subarray(o + 4, Math.min(b.length, o + 2 + length));
    if (marker === 0xeb && seg.length >= 16 && seg[0] === 0x4a && seg[1] === 0x50) {
      const en = (seg[2] << 8) | seg[3];
      const z = u32(seg, 4);
      const list = parts.get(en) ?? [];
      list.push({ z, data: seg.subarray(8) });
      parts.set(en, list);
    }
    o += 2 + length;
  }
  const out: Uint8Array[] = [];
  for (const list of parts.values()) {
    list.sort((x, y) => x.z - y.z);
    // every segment repeats the box's LBox and TBox (and XLBox when LBox is 1)
    const head = list[0].data.length >= 4 && u32(list[0].data, 0) === 1 ? 16 : 8;
    const chunks = list.map((p, i) => (i === 0 ? p.data : p.data.subarray(head)));
    out.push(Buffer.concat(chunks));
  }
  return out;
}

/** GIF: the data sub-blocks of each C2PA_GIF application extension, joined. */
function gifStores(b: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  const id = Buffer.from([0x21, 0xff, 0x0b, ...Buffer.from('C2PA_GIF')]);
  const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  for (let at = buf.indexOf(id); at >= 0; at = buf.indexOf(id, at + 1)) {
    const chunks: Uint8Array[] = [];
    let o = at + 14; // introducer, label, block size 11, identifier 8, authentication code 3
    while (o < b.length && b[o] !== 0) {
      chunks.push(b.subarray(o + 1, Math.min(b.length, o + 1 + b[o])));
      o += 1 + b[o];
    }
    out.push(Buffer.concat(chunks));
  }
  return out;
}

/** Every place a manifest store's description box starts a store box whole in `b`. */
function wholeStores(b: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  for (let at = buf.indexOf(STORE_SIGNATURE); at >= 0; at = buf.indexOf(STORE_SIGNATURE, at + 1)) {
    const start = at - 12; // [LBox 'jumb'] [LBox 'jumd' UUID ...]
    if (start >= 0 && type4(b, start + 4) === 'jumb') out.push(b.subarray(start));
  }
  return out;
}

/**
 * The size of the manifest stores in a file of `format`, or null when the walk stopped
 * at a limit (then `size` holds the counts so far, one of them past its limit).
 */
export function measureManifestStores(bytes: Uint8Array, format: MediaFormat): { size: ManifestStoreSize; over: string | null } {
  const size: ManifestStoreSize = { stores: 0, bytes: 0, manifests: 0, assertions: 0, ingredients: 0, depth: 0 };
  const stores = format === 'jpeg' ? jpegStores(bytes) : format === 'gif' ? gifStores(bytes) : wholeStores(bytes);
  try {
    for (const store of stores) {
      // the store box's own length (a whole-file search gives what follows it too)
      const declared = store.length >= 8 ? u32(store, 0) : 0;
      const length = declared >= 8 && declared <= store.length ? declared : store.length;
      size.stores++;
      size.bytes += length;
      if (size.bytes > C2PA_LIMITS.maxBytes) throw new OverLimit();
      walk(store, 0, length, 0, '', size);
    }
  } catch (e) {
    if (!(e instanceof OverLimit)) throw e;
  }
  return { size, over: overLimit(size) };
}

/** Which limit `size` passes, in words, or null. */
function overLimit(s: ManifestStoreSize): string | null {
  const L = C2PA_LIMITS;
  if (s.bytes > L.maxBytes) return `its JUMBF is over ${L.maxBytes} bytes`;
  if (s.depth > L.maxDepth) return `its boxes nest over ${L.maxDepth} deep`;
  if (s.manifests > L.maxManifests) return `it has over ${L.maxManifests} manifests`;
  if (s.assertions > L.maxAssertions) return `it has over ${L.maxAssertions} assertions`;
  if (s.ingredients > L.maxIngredients) return `it has over ${L.maxIngredients} ingredients`;
  return null;
}
