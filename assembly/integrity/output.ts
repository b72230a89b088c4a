// The static output block every integrity kernel writes to, read by the host
// (src/lib/integrity.ts). No managed allocation: records are raw 32-byte slots.
//
// Record layout (little-endian):
//   +0  i32 code     what was found (codes.ts)
//   +4  i32 aux      code-specific: a chunk type, a marker, a code point, a kind
//   +8  u32 offset   where in the input
//   +12 u32 length   how many bytes it covers
//   +16 f64 value    code-specific number
//   +24 f64 value2   code-specific number
// `stats` is a separate block of 64 f64 slots for per-call summary numbers.

export const RECORD_SIZE: i32 = 32;
export const MAX_RECORDS: i32 = 1024;

const records: usize = memory.data(RECORD_SIZE * MAX_RECORDS, 16);
const stats: usize = memory.data(64 * 8, 16);
let count: i32 = 0;
let dropped: i32 = 0;

/** Clears the output block; every public kernel entry calls it first. */
export function resetOutput(): void {
  count = 0;
  dropped = 0;
  memory.fill(stats, 0, 64 * 8);
}

export function outputPtr(): usize {
  return records;
}

export function outputCount(): i32 {
  return count;
}

/** Records that did not fit in the block (the host reports them as a count). */
export function outputDropped(): i32 {
  return dropped;
}

export function statsPtr(): usize {
  return stats;
}

@inline
export function setStat(slot: i32, v: f64): void {
  store<f64>(stats + (<usize>slot << 3), v);
}

@inline
export function getStat(slot: i32): f64 {
  return load<f64>(stats + (<usize>slot << 3));
}

export function emit(code: i32, aux: i32, offset: u32, length: u32, value: f64, value2: f64): void {
  if (count >= MAX_RECORDS) {
    dropped++;
    return;
  }
  const p = records + <usize>count * RECORD_SIZE;
  store<i32>(p, code);
  store<i32>(p, aux, 4);
  store<u32>(p, offset, 8);
  store<u32>(p, length, 12);
  store<f64>(p, value, 16);
  store<f64>(p, value2, 24);
  count++;
}

@inline
export function be16(p: usize): u32 {
  return (<u32>load<u8>(p) << 8) | <u32>load<u8>(p + 1);
}

@inline
export function be32(p: usize): u32 {
  return (<u32>load<u8>(p) << 24) | (<u32>load<u8>(p + 1) << 16) | (<u32>load<u8>(p + 2) << 8) | <u32>load<u8>(p + 3);
}

@inline
export function le16(p: usize): u32 {
  return <u32>load<u8>(p) | (<u32>load<u8>(p + 1) << 8);
}

@inline
export function le32(p: usize): u32 {
  return <u32>load<u8>(p) | (<u32>load<u8>(p + 1) << 8) | (<u32>load<u8>(p + 2) << 16) | (<u32>load<u8>(p + 3) << 24);
}
