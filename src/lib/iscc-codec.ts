// The ISCC codec (ISO 24138; iscc-core codec.py): a unit is a header of four
// variable-length nibble fields (MainType, SubType, Version, Length), padded to whole
// bytes, followed by its body; its canonical string is "ISCC:" + RFC 4648 base32 of
// header + body, upper case, without padding. An ISCC-CODE (MainType ISCC) is one header
// over the 64-bit bodies of its units; its Length field says which optional units
// (Meta, Semantic, Content) it holds.

/** MainTypes (iscc-core constants.py MT). */
export const ISCC_MAIN_TYPES = ['META', 'SEMANTIC', 'CONTENT', 'DATA', 'INSTANCE', 'ISCC', 'ID', 'FLAKE'] as const;
export type IsccMainType = (typeof ISCC_MAIN_TYPES)[number];
/** SubTypes of CONTENT and SEMANTIC units (ST_CC). */
export const ISCC_CONTENT_TYPES = ['TEXT', 'IMAGE', 'AUDIO', 'VIDEO', 'MIXED'] as const;
export type IsccContentType = (typeof ISCC_CONTENT_TYPES)[number];
/** SubTypes of ISCC-CODEs (ST_ISCC): the content type, or SUM (Data and Instance only), NONE, WIDE. */
export const ISCC_CODE_TYPES = ['TEXT', 'IMAGE', 'AUDIO', 'VIDEO', 'MIXED', 'SUM', 'NONE', 'WIDE'] as const;

export const MT = { META: 0, SEMANTIC: 1, CONTENT: 2, DATA: 3, INSTANCE: 4, ISCC: 5, ID: 6, FLAKE: 7 } as const;
export const ST_CC = { TEXT: 0, IMAGE: 1, AUDIO: 2, VIDEO: 3, MIXED: 4 } as const;
export const ST_ISCC = { TEXT: 0, IMAGE: 1, AUDIO: 2, VIDEO: 3, MIXED: 4, SUM: 5, NONE: 6, WIDE: 7 } as const;

/** The optional units of an ISCC-CODE by its Length field (iscc-core constants.py UNITS). */
const UNITS: readonly (readonly number[])[] = [
  [], [MT.CONTENT], [MT.SEMANTIC], [MT.SEMANTIC, MT.CONTENT],
  [MT.META], [MT.META, MT.CONTENT], [MT.META, MT.SEMANTIC], [MT.META, MT.SEMANTIC, MT.CONTENT],
];

/** A decoded ISCC: its header fields, the body's length in bits and the body. */
export interface IsccUnit {
  mainType: number;
  subType: number;
  version: number;
  /** The header's raw Length field. */
  length: number;
  /** Bits of the body (for an ISCC-CODE: of all its units' bodies together). */
  bits: number;
  body: Uint8Array;
}

export class IsccError extends Error {
  override name = 'IsccError';
}

// ---- base32 (RFC 4648 section 6, no padding) --------------------------------------

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const B32_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < 32; i++) {
  B32_VALUE[B32.charCodeAt(i)] = i;
  B32_VALUE[B32.toLowerCase().charCodeAt(i)] = i;
}

export function base32Encode(bytes: Uint8Array): string {
  let out = '';
  let acc = 0;
  let bits = 0;
  for (const b of bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += B32[(acc >>> (bits - 5)) & 31];
      bits -= 5;
    }
    acc &= (1 << bits) - 1;
  }
  if (bits > 0) out += B32[(acc << (5 - bits)) & 31];
  return out;
}

/** Decodes unpadded base32, either case; refuses other characters and impossible lengths. */
export function base32Decode(text: string): Uint8Array {
  const n = text.length;
  if ([1, 3, 6].includes(n % 8)) throw new IsccError(`not base32: ${n} characters cannot end a group`);
  const out = new Uint8Array(Math.floor((n * 5) / 8));
  let acc = 0;
  let bits = 0;
  let at = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    const v = c < 128 ? B32_VALUE[c] : -1;
    if (v < 0) throw new IsccError(`not base32: character ${JSON.stringify(text[i])} at ${i}`);
    acc = ((acc << 5) | v) & 0xfff;
    bits += 5;
    if (bits >= 8) {
      out[at++] = (acc >>> (bits - 8)) & 255;
      bits -= 8;
    }
  }
  return out;
}

// ---- the header ------------------------------------------------------------------

/** Appends n as a varnibble (0xxx, 10xxxxxx, 110x.., 1110x..: 0-7, 8-71, 72-583, 584-4679). */
function pushVarnibble(nibbles: number[], n: number): void {
  if (!Number.isInteger(n) || n < 0 || n >= 4680) throw new IsccError(`header value ${n} is not in 0..4679`);
  if (n < 8) nibbles.push(n);
  else if (n < 72) {
    const v = n - 8; // 10 + 6 bits
    nibbles.push(0b1000 | (v >> 4), v & 15);
  } else if (n < 584) {
    const v = n - 72; // 110 + 9 bits
    nibbles.push(0b1100 | (v >> 8), (v >> 4) & 15, v & 15);
  } else {
    const v = n - 584; // 1110 + 12 bits
    nibbles.push(0b1110, (v >> 8) & 15, (v >> 4) & 15, v & 15);
  }
}

/** The header bytes of (mainType, subType, version, length): four varnibbles, zero-padded. */
export function encodeHeader(mainType: number, subType: number, version: number, length: number): Uint8Array {
  const nibbles: number[] = [];
  for (const v of [mainType, subType, version, length]) pushVarnibble(nibbles, v);
  if (nibbles.length % 2) nibbles.push(0);
  const out = new Uint8Array(nibbles.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = (nibbles[2 * i] << 4) | nibbles[2 * i + 1];
  return out;
}

/** The four header fields of `bytes` and the offset (bytes) where the body starts. */
export function decodeHeader(bytes: Uint8Array): { fields: [number, number, number, number]; bodyAt: number } {
  const nibble = (i: number): number => {
    if (i >= bytes.length * 2) throw new IsccError('ISCC too short for its header');
    return (bytes[i >> 1] >> (i & 1 ? 0 : 4)) & 15;
  };
  let at = 0;
  const fields: number[] = [];
  for (let f = 0; f < 4; f++) {
    const first = nibble(at);
    if ((first & 0b1000) === 0) {
      fields.push(first);
      at += 1;
    } else if ((first & 0b1100) === 0b1000) {
      fields.push((((first & 0b11) << 4) | nibble(at + 1)) + 8);
      at += 2;
    } else if ((first & 0b1110) === 0b1100) {
      fields.push((((first & 1) << 8) | (nibble(at + 1) << 4) | nibble(at + 2)) + 72);
      at += 3;
    } else if (first === 0b1110) {
      fields.push(((nibble(at + 1) << 8) | (nibble(at + 2) << 4) | nibble(at + 3)) + 584);
      at += 4;
    } else {
      throw new IsccError('invalid ISCC header: a field starts with 1111');
    }
  }
  // an odd count of nibbles was padded with 0000
  if (at % 2 === 1) {
    if (nibble(at) !== 0) throw new IsccError('invalid ISCC header: non-zero padding');
    at += 1;
  }
  return { fields: fields as [number, number, number, number], bodyAt: at / 2 };
}

/** Body bits of a unit by its MainType and Length field (iscc-core decode_length). */
export function bodyBits(mainType: number, subType: number, length: number): number {
  if (mainType === MT.ISCC) {
    if (subType === ST_ISCC.WIDE) return 256;
    if (length > 7) throw new IsccError(`invalid ISCC-CODE unit set ${length}`);
    return UNITS[length].length * 64 + 128;
  }
  if (mainType === MT.ID) return length * 8 + 64;
  if (mainType > MT.FLAKE) throw new IsccError(`invalid MainType ${mainType}`);
  return (length + 1) * 32;
}

// ---- strings and bytes -------------------------------------------------------------

/** The base32 part of an ISCC string: "ISCC:" (any case) and hyphens removed (iscc_clean). */
function cleanIscc(code: string): string {
  if (typeof code !== 'string') throw new IsccError('an ISCC must be a string');
  const parts = code.trim().split(':');
  if (parts.length > 2) throw new IsccError('malformed ISCC string: more than one ":"');
  if (parts.length === 2 && parts[0].trim().toLowerCase() !== 'iscc') throw new IsccError(`invalid ISCC scheme ${JSON.stringify(parts[0])}`);
  return parts[parts.length - 1].trim().replaceAll('-', '');
}

/** An ISCC's bytes (header + body) from its string (with or without "ISCC:"). */
export function isccToBytes(code: string): Uint8Array {
  const bytes = base32Decode(cleanIscc(code));
  const { fields, bodyAt } = decodeHeader(bytes);
  const bits = bodyBits(fields[0], fields[1], fields[3]);
  if (bytes.length - bodyAt !== bits / 8) {
    throw new IsccError(`ISCC header says ${bits / 8} body bytes, the string has ${bytes.length - bodyAt}`);
  }
  return bytes;
}

/** The canonical string "ISCC:..." of an ISCC's bytes (header + body), checked. */
export function isccFromBytes(bytes: Uint8Array): string {
  if (!(bytes instanceof Uint8Array)) throw new IsccError('ISCC bytes must be a Uint8Array');
  const { fields, bodyAt } = decodeHeader(bytes);
  const bits = bodyBits(fields[0], fields[1], fields[3]);
  if (bytes.length - bodyAt !== bits / 8) throw new IsccError(`ISCC header says ${bits / 8} body bytes, there are ${bytes.length - bodyAt}`);
  return `ISCC:${base32Encode(bytes)}`;
}

/** Decodes an ISCC string into its header fields and body. */
export function decodeIscc(code: string): IsccUnit {
  const bytes = isccToBytes(code);
  const { fields, bodyAt } = decodeHeader(bytes);
  return {
    mainType: fields[0], subType: fields[1], version: fields[2], length: fields[3],
    bits: (bytes.length - bodyAt) * 8, body: bytes.slice(bodyAt),
  };
}

/**
 * The canonical string of a unit (iscc-core encode_component): `bits` (a multiple of
 * 32, at most 256) of `digest` after the header.
 */
export function encodeUnit(mainType: number, subType: number, version: number, bits: number, digest: Uint8Array): string {
  if (mainType === MT.ISCC) throw new IsccError('an ISCC-CODE is not a unit: use isccCode()');
  if (!Number.isInteger(bits) || bits < 32 || bits % 32 !== 0) throw new IsccError(`invalid length ${bits} bits: a multiple of 32 is needed`);
  if (digest.length * 8 < bits) throw new IsccError(`a ${bits}-bit unit needs ${bits / 8} digest bytes, not ${digest.length}`);
  const length = mainType === MT.ID ? (bits - 64) / 8 : bits / 32 - 1;
  const header = encodeHeader(mainType, subType, version, length);
  const out = new Uint8Array(header.length + bits / 8);
  out.set(header);
  out.set(digest.subarray(0, bits / 8), header.length);
  return `ISCC:${base32Encode(out)}`;
}

/** The units of an ISCC-CODE (or of a single unit: itself), as canonical strings (iscc_decompose). */
export function isccDecompose(code: string): string[] {
  let bytes = base32Decode(cleanIscc(code));
  const units: string[] = [];
  while (bytes.length > 0) {
    const { fields, bodyAt } = decodeHeader(bytes);
    const [mt, st, vs, ln] = fields;
    const body = bytes.subarray(bodyAt);
    if (mt !== MT.ISCC) {
      const bits = bodyBits(mt, st, ln);
      if (body.length < bits / 8) throw new IsccError('ISCC sequence ends inside a unit');
      units.push(encodeUnit(mt, st, vs, bits, body));
      bytes = body.subarray(bits / 8);
      continue;
    }
    const want = bodyBits(mt, st, ln) / 8;
    if (body.length !== want) throw new IsccError(`ISCC-CODE header says ${want} body bytes, there are ${body.length}`);
    if (st === ST_ISCC.WIDE) {
      units.push(encodeUnit(MT.DATA, 0, vs, 128, body.subarray(0, 16)), encodeUnit(MT.INSTANCE, 0, vs, 128, body.subarray(16, 32)));
      break;
    }
    UNITS[ln].forEach((unitType, i) => {
      units.push(encodeUnit(unitType, unitType === MT.META ? 0 : st, vs, 64, body.subarray(i * 8)));
    });
    units.push(encodeUnit(MT.DATA, 0, vs, 64, body.subarray(body.length - 16)), encodeUnit(MT.INSTANCE, 0, vs, 64, body.subarray(body.length - 8)));
    break;
  }
  return units;
}

export interface IsccCodeOptions {
  /** 128-bit Data and Instance bodies when those are the only units (SubType WIDE). */
  wide?: boolean;
}

/**
 * The composite ISCC-CODE of units (iscc-core gen_iscc_code_v0): at least a Data-Code
 * and an Instance-Code, each unit at least 64 bits; sorted by MainType, 64 bits of each.
 */
export function isccCode(codes: readonly string[], options: IsccCodeOptions = {}): { iscc: string } {
  if (!Array.isArray(codes) || codes.length < 2) throw new IsccError('an ISCC-CODE needs at least two units');
  const decoded = codes.map((c) => {
    if (cleanIscc(c).length < 16) throw new IsccError(`cannot build an ISCC-CODE from units shorter than 64 bits: ${c}`);
    return decodeIscc(c);
  });
  if (decoded.some((u) => u.mainType === MT.ISCC)) throw new IsccError('an ISCC-CODE is made of units, not of ISCC-CODEs');
  decoded.sort((a, b) => a.mainType - b.mainType); // stable, as Python's sorted
  const types = decoded.map((u) => u.mainType);
  const n = types.length;
  if (types[n - 2] !== MT.DATA || types[n - 1] !== MT.INSTANCE) throw new IsccError('an ISCC-CODE needs a Data-Code and an Instance-Code');
  const wide = options.wide === true && n === 2 && decoded.every((u) => u.bits >= 128);
  let subType: number;
  if (wide) subType = ST_ISCC.WIDE;
  else {
    const contentTypes = new Set(decoded.filter((u) => u.mainType === MT.SEMANTIC || u.mainType === MT.CONTENT).map((u) => u.subType));
    if (contentTypes.size > 1) throw new IsccError('the Semantic-Code and Content-Code must be of the same SubType');
    subType = contentTypes.size === 1 ? [...contentTypes][0] : n === 2 ? ST_ISCC.SUM : ST_ISCC.NONE;
  }
  const optional = types.slice(0, -2);
  const length = UNITS.findIndex((u) => u.length === optional.length && u.every((t, i) => t === optional[i]));
  if (length < 0) throw new IsccError(`invalid combination of ISCC units: ${types.map((t) => ISCC_MAIN_TYPES[t] ?? t).join(', ')}`);
  const take = wide ? 16 : 8;
  const header = encodeHeader(MT.ISCC, subType, 0, length);
  const out = new Uint8Array(header.length + take * n);
  out.set(header);
  decoded.forEach((u, i) => out.set(u.body.subarray(0, take), header.length + i * take));
  return { iscc: `ISCC:${base32Encode(out)}` };
}

const POPCOUNT = Uint8Array.from({ length: 256 }, (_, i) => {
  let c = 0;
  for (let v = i; v; v &= v - 1) c++;
  return c;
});

/**
 * Hamming distance between the bodies of two units of the same MainType, SubType and
 * version (a Content-Code of one kind, Data-Codes, ...). Over the shorter body when their
 * lengths differ: a shorter unit is the first bits of a longer one of the same content.
 */
export function isccDistance(a: string, b: string): number {
  const ua = decodeIscc(a);
  const ub = decodeIscc(b);
  if (ua.mainType === MT.ISCC || ub.mainType === MT.ISCC) throw new IsccError('isccDistance compares units; decompose ISCC-CODEs first (isccDecompose)');
  if (ua.mainType !== ub.mainType || ua.subType !== ub.subType || ua.version !== ub.version) {
    throw new IsccError('the two ISCCs are not of the same type');
  }
  const n = Math.min(ua.body.length, ub.body.length);
  let d = 0;
  for (let i = 0; i < n; i++) d += POPCOUNT[ua.body[i] ^ ub.body[i]];
  return d;
}

/** The name of a unit's type, e.g. "CONTENT-IMAGE-V0-64" (iscc-core iscc_type_id for units). */
export function isccTypeName(code: string): string {
  const u = decodeIscc(code);
  const main = ISCC_MAIN_TYPES[u.mainType];
  const sub = u.mainType === MT.CONTENT || u.mainType === MT.SEMANTIC ? (ISCC_CONTENT_TYPES[u.subType] ?? String(u.subType))
    : u.mainType === MT.ISCC ? (ISCC_CODE_TYPES[u.subType] ?? String(u.subType)) : 'NONE';
  const length = u.mainType === MT.ISCC
    ? (u.subType === ST_ISCC.WIDE ? 'WIDE' : UNITS[u.length].map((t) => ISCC_MAIN_TYPES[t][0]).join('') + 'DI')
    : String(u.bits);
  return `${main}-${sub}-V${u.version}-${length}`;
}
