// Bounds on a C2PA manifest store, checked before the reader parses it (issue 25 item
// 15). The reader's work grows with the square of the assertions (validly signed
// manifests from our own writer: 1,000 assertions read in 0.34 s, 2,000 in 1.25 s,
// 10,000 in 38 s), so a few uploads could hold every worker for a minute. A structural
// walk of the JUMBF boxes (ISO 19566-5: sizes and the description boxes' type and
// label; no CBOR, no hashing, no signature), linear in their bytes, counts the store's
// manifests, assertions, ingredients, depth and bytes first; a store past any of
// C2PA_LIMITS is not given to the reader at all (c2pa.ts says which limit it passed).
//
// Where the store is, per container, found as the reader (c2pa-rs) extracts it, so that
// the scan finds a store whenever the reader reads one (issue 34: a JPEG whose APP11 CI
// bytes were changed hid its store from an earlier scan that the reader still read):
// JPEG splits it over APP11 segments (jpegStores: c2pa-rs's rule over img-parts' segment
// walk, CI ignored); GIF over the data sub-blocks of its C2PA_GIF application extension;
// every other format the reader takes (PNG caBX, RIFF C2PA chunks, the MP4 uuid box,
// TIFF's tag) holds it whole, found by its boxes wherever it is (wholeStores), and MP3's
// ID3 frames are decoded first (unsynchronisation, zlib) as the reader's ID3 library
// does. test/c2pa/limits-differential.test.ts compares the scan with the reader on the
// fixtures and on mutated files.
import { inflateSync } from 'node:zlib';
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
const JUMB = Buffer.from('jumb');

class OverLimit extends Error {}

const u32 = (b: Uint8Array, o: number) => ((b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]) >>> 0;
const type4 = (b: Uint8Array, o: number) => String.fromCharCode(b[o], b[o + 1], b[o + 2], b[o + 3]);

/** The reader stops here: it refuses the store, or the bytes it was given end before (whole stores are searched to the end of the file). */
class Stop extends Error {}

interface BoxHeader { size: number; type: string; head: number }

/** A box header at `o` as the reader's BoxReader reads one (LBox 1: an XLBox follows); null at the end of the bytes. */
function boxHeader(b: Uint8Array, o: number): BoxHeader | null {
  if (o >= b.length) return null;
  if (o + 8 > b.length) throw new Stop();
  if (u32(b, o) !== 1) return { size: u32(b, o), type: type4(b, o + 4), head: 8 };
  if (o + 16 > b.length) throw new Stop();
  return { size: u32(b, o + 8) * 2 ** 32 + u32(b, o + 12), type: type4(b, o + 4), head: 16 };
}

/** The content box types the reader parses (json, cbor, padding, jp2c, brotli, uuid, embedded file); others are skipped by their size. */
const CONTENT_BOXES = new Set(['json', 'cbor', 'free', 'jp2c', 'brob', 'uuid', 'bfdb', 'bidb']);
/** A type of four zero bytes reads as the end of a superbox's children (BoxType::Empty). */
const EMPTY = '\0\0\0\0';
/** The reader's own nesting bound (BoxReader::MAX_JUMB_DEPTH). */
const READER_MAX_DEPTH = 32;

/**
 * The superbox at `o`, read as c2pa-rs's BoxReader::read_super_box reads it, counting into
 * `size`; answers the position after it. The reader reads sequentially: a superbox's
 * children from after its description box until the position is its declared end, the
 * bytes end, or a box of type 0 (past the end: refused). So a box whose length overruns
 * its parent or the buffer is read on, its parent's following bytes as its children;
 * the walk does the same. `parent` is the enclosing superbox's kind (its UUID's first
 * four bytes: c2pa, c2ma, c2as, ...).
 */
function superbox(b: Uint8Array, o: number, depth: number, parent: string, size: ManifestStoreSize): number {
  if (depth >= READER_MAX_DEPTH) throw new Stop();
  const h = boxHeader(b, o);
  if (h === null || h.type !== 'jumb') throw new Stop();
  const end = o + h.size;
  let p = o + h.head;
  const d = boxHeader(b, p);
  if (d === null || d.type !== 'jumd' || d.size < 26) throw new Stop();
  const content = p + d.head;
  p = content + d.size - 8; // the reader refuses a description box it does not consume exactly
  if (content + 18 > b.length || p > b.length) throw new Stop();
  if ((b[content + 16] & 0x03) !== 0x03) throw new Stop(); // requestable and labelled
  let labelEnd = content + 17;
  while (labelEnd < p && b[labelEnd] !== 0) labelEnd++;
  if (labelEnd >= p || labelEnd === content + 17) throw new Stop();
  const kind = type4(b, content);
  const label = Buffer.from(b.buffer, b.byteOffset + content + 17, Math.min(256, labelEnd - content - 17)).toString('latin1');

  if (depth + 1 > size.depth) size.depth = depth + 1;
  if (size.depth > C2PA_LIMITS.maxDepth) throw new OverLimit();
  if (parent === 'c2pa') size.manifests++;
  if (parent === 'c2as') {
    size.assertions++;
    if (label.startsWith('c2pa.ingredient')) size.ingredients++;
  }
  if (size.manifests > C2PA_LIMITS.maxManifests || size.assertions > C2PA_LIMITS.maxAssertions || size.ingredients > C2PA_LIMITS.maxIngredients) throw new OverLimit();

  for (;;) {
    const c = boxHeader(b, p);
    if (c === null) {
      if (p > end) throw new Stop();
      return p;
    }
    if (c.type === 'jumb') {
      p = superbox(b, p, depth + 1, kind, size);
    } else if (c.type === EMPTY) {
      p += c.head;
      if (p > end) throw new Stop();
      return p;
    } else if (c.size === 0) {
      if (!CONTENT_BOXES.has(c.type) || c.type === 'bfdb') throw new Stop();
      p += 8; // an empty content box: its header alone
    } else {
      if (c.size < 8) throw new Stop();
      p += c.head + c.size - 8;
      if (p > b.length) throw new Stop();
    }
    if (p === end) return p;
    if (p > end) throw new Stop();
  }
}

/** Markers img-parts (the reader's JPEG parser) reads a length after: RSTn, APPn, SOFn (DHT, DAC among them), SOS, COM, DQT, DRI. */
const hasLength = (m: number) => (m >= 0xd0 && m <= 0xd7) || (m >= 0xe0 && m <= 0xef) || (m >= 0xc0 && m <= 0xcf) || m === 0xda || m === 0xfe || m === 0xdb || m === 0xdd;

/**
 * JPEG: the manifest store exactly as c2pa-rs (jpeg_io.rs `read_cai`) extracts it from
 * the segments img-parts 0.4 parses. The segment walk: after SOI, bytes that are not
 * 0xFF are skipped (the parser resynchronises), fill bytes 0xFF are skipped, EOI ends,
 * markers without a length are passed over, and the first SOS segment is the last one
 * read. Of the APP11 segments longer than 16 bytes, in file order, the CI bytes never
 * looked at: one longer than 28 whose bytes 24-27 are `c2pa` starts the store (its bytes
 * from 8 on); later ones with the same box instance (bytes 2-3) and a sequence number
 * (4-7) above the count so far continue it (their bytes from 16 on); one with that
 * instance and a sequence number not above the count ends the store. A second start
 * makes the reader refuse the file (more than one store): the first is measured.
 * A truncated segment makes the reader refuse the whole file; what came before it is
 * measured anyway, so the scan never finds less than the reader reads.
 */
function jpegStores(b: Uint8Array): Uint8Array[] {
  if (b.length < 2 || b[0] !== 0xff || b[1] !== 0xd8) return [];
  const app11: Uint8Array[] = [];
  let o = 2;
  walk: while (o < b.length) {
    if (b[o++] !== 0xff) continue;
    let marker: number;
    do {
      if (o >= b.length) break walk;
      marker = b[o++];
    } while (marker === 0xff);
    if (marker === 0xd9) break;
    if (!hasLength(marker)) continue;
    if (o + 2 > b.length) break;
    const length = (b[o] << 8) | b[o + 1];
    if (length < 2) break;
    const contents = b.subarray(o + 2, Math.min(b.length, o + length));
    o += length;
    if (marker === 0xeb) app11.push(contents);
    if (marker === 0xda) break;
  }
  const chunks: Uint8Array[] = [];
  let instance = -1;
  let count = 0;
  for (const seg of app11) {
    if (seg.length <= 16) continue;
    const en = (seg[2] << 8) | seg[3];
    const z = u32(seg, 4);
    if (count > 0 && en === instance) {
      if (z <= count) {
        instance = -1;
        continue;
      }
      chunks.push(seg.subarray(16));
      count++;
    } else if (seg.length > 28 && type4(seg, 24) === 'c2pa') {
      if (chunks.length > 0) break; // a second store: the reader refuses the file
      chunks.push(seg.subarray(8));
      count = 1;
      instance = en;
    }
  }
  return chunks.length === 0 ? [] : [Buffer.concat(chunks)];
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

/**
 * Every manifest store held whole in `b`: each `jumb` box (LBox, or LBox 1 and an
 * XLBox, as the reader's box parser takes both) whose first child is a `jumd` (either
 * header) with the `c2pa` store UUID, from its start to the end of `b` (its declared
 * length is applied when it is walked). Whatever container frames it (PNG caBX, RIFF
 * C2PA chunks, the MP4 uuid box, TIFF's tag, an ID3 frame), the reader reads bytes laid
 * out this way, so searching the bytes is a superset of every container's rule.
 */
function wholeStores(b: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  for (let at = buf.indexOf(JUMB); at >= 0; at = buf.indexOf(JUMB, at + 1)) {
    const start = at - 4;
    if (start < 0) continue;
    const header = u32(b, start) === 1 ? 16 : 8;
    const d = start + header;
    if (d + 8 > b.length || type4(b, d + 4) !== 'jumd') continue;
    const uuid = d + (u32(b, d) === 1 ? 16 : 8);
    if (uuid + 16 <= b.length && Buffer.compare(buf.subarray(uuid, uuid + 16), STORE_UUID) === 0) out.push(b.subarray(start));
  }
  return out;
}

/** A store's bytes cut to its box's declared length (a search gives what follows it too); LBox 1 reads the XLBox. */
function declared(store: Uint8Array): Uint8Array {
  let length = store.length >= 8 ? u32(store, 0) : 0;
  if (length === 1 && store.length >= 16) length = u32(store, 8) * 2 ** 32 + u32(store, 12);
  return length >= 8 && length <= store.length ? store.subarray(0, length) : store;
}

class Id3Over extends Error {}

/** ID3v2 frame flags (v2.3, v2.4) and the unsynchronisation the tag applies. */
const V3_COMPRESSED = 0x0080;
const V4_COMPRESSED = 0x0008;
const V4_UNSYNCHRONISED = 0x0002;
const V4_DATA_LENGTH = 0x0001;

/** ID3 unsynchronisation undone: each 0xFF 0x00 becomes 0xFF. */
function resynchronise(b: Uint8Array): Uint8Array {
  const out = new Uint8Array(b.length);
  let n = 0;
  for (let i = 0; i < b.length; i++) {
    out[n++] = b[i];
    if (b[i] === 0xff && b[i + 1] === 0x00) i++;
  }
  return out.subarray(0, n);
}

const syncsafe = (b: Uint8Array, o: number) => ((b[o] & 0x7f) << 21) | ((b[o + 1] & 0x7f) << 14) | ((b[o + 2] & 0x7f) << 7) | (b[o + 3] & 0x7f);

/**
 * MP3: the content of every frame of the ID3v2 tag at the file's start, as the reader's
 * ID3 library (rust-id3) decodes it: a v2.2/v2.3 tag's unsynchronisation undone over
 * the whole tag, a v2.4 frame's over the frame; a frame's zlib compression inflated (at
 * most C2PA_LIMITS.maxBytes + 1 bytes: past that the store is over the byte limit,
 * whatever it holds). A GEOB frame's object is the manifest store; the stores are then
 * found in each frame's bytes by their boxes (wholeStores). Without this a store hides
 * from a search of the file's bytes behind the tag's unsynchronisation or a compressed
 * frame.
 */
function id3Frames(b: Uint8Array): { frames: Uint8Array[]; end: number } | null {
  if (b.length < 10 || b[0] !== 0x49 || b[1] !== 0x44 || b[2] !== 0x33) return null;
  const version = b[3];
  const flags = b[5];
  const end = Math.min(b.length, 10 + syncsafe(b, 6));
  let tag = b.subarray(10, end);
  if (version !== 4 && flags & 0x80) tag = resynchronise(tag);
  let o = 0;
  if (version !== 2 && flags & 0x40 && tag.length >= 4) o = version === 4 ? syncsafe(tag, 0) : 4 + u32(tag, 0); // the extended header
  const frames: Uint8Array[] = [];
  const header = version === 2 ? 6 : 10;
  while (o + header <= tag.length && tag[o] !== 0) {
    const size = version === 2 ? (tag[o + 3] << 16) | (tag[o + 4] << 8) | tag[o + 5] : version === 4 ? syncsafe(tag, o + 4) : u32(tag, o + 4);
    const frameFlags = version === 2 ? 0 : (tag[o + 8] << 8) | tag[o + 9];
    let content = tag.subarray(o + header, Math.min(tag.length, o + header + size));
    o += header + size;
    let compressed = false;
    if (version === 3 && frameFlags & V3_COMPRESSED) {
      content = content.subarray(4);
      compressed = true;
    } else if (version === 4) {
      if (frameFlags & V4_DATA_LENGTH) content = content.subarray(4);
      if (frameFlags & V4_UNSYNCHRONISED) content = resynchronise(content);
      compressed = (frameFlags & V4_COMPRESSED) !== 0;
    }
    if (compressed) {
      try {
        content = inflateSync(content, { maxOutputLength: C2PA_LIMITS.maxBytes + 1 });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || e instanceof RangeError) throw new Id3Over();
        continue; // not zlib: the reader cannot decode this frame either
      }
    }
    frames.push(content);
  }
  return { frames, end };
}

/**
 * The size of the manifest stores in a file of `format`, or null when the walk stopped
 * at a limit (then `size` holds the counts so far, one of them past its limit).
 */
export function measureManifestStores(bytes: Uint8Array, format: MediaFormat): { size: ManifestStoreSize; over: string | null } {
  const size: ManifestStoreSize = { stores: 0, bytes: 0, manifests: 0, assertions: 0, ingredients: 0, depth: 0 };
  let stores: Uint8Array[];
  try {
    stores = format === 'jpeg' ? jpegStores(bytes) : format === 'gif' ? gifStores(bytes) : wholeStores(bytes);
    if (format === 'mp3') {
      // the reader reads the ID3 tag: the stores of its frames as decoded, and any the file holds after it
      const tag = id3Frames(bytes);
      if (tag !== null) stores = [...tag.frames.flatMap(wholeStores), ...wholeStores(bytes.subarray(tag.end))];
    }
  } catch (e) {
    if (!(e instanceof Id3Over)) throw e;
    size.stores = 1;
    size.bytes = C2PA_LIMITS.maxBytes + 1;
    return { size, over: overLimit(size) };
  }
  try {
    for (const store of stores) {
      const length = declared(store).length;
      size.stores++;
      size.bytes += length;
      if (size.bytes > C2PA_LIMITS.maxBytes) throw new OverLimit();
      try {
        superbox(store, 0, 0, '', size);
      } catch (e) {
        if (!(e instanceof Stop)) throw e;
      }
    }
  } catch (e) {
    if (!(e instanceof OverLimit)) throw e;
  }
  return { size, over: overLimit(size) };
}

/** Which limit a detached manifest store (application/c2pa, src/media/c2pa-store.ts) passes, in words, or null. */
export function measureManifestStore(store: Uint8Array): string | null {
  const size: ManifestStoreSize = { stores: 1, bytes: store.length, manifests: 0, assertions: 0, ingredients: 0, depth: 0 };
  try {
    if (size.bytes <= C2PA_LIMITS.maxBytes) superbox(store, 0, 0, '', size);
  } catch (e) {
    if (!(e instanceof Stop) && !(e instanceof OverLimit)) throw e;
  }
  return overLimit(size);
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
