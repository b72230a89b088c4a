// CRC-32 (ISO 3309 / ITU-T V.42, the PNG and ZIP checksum), slicing-by-8 over
// static tables built once.

const table: usize = memory.data(256 * 4 * 8, 16);
let ready: bool = false;

function buildTable(): void {
  for (let n: u32 = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    store<u32>(table + (<usize>n << 2), c);
  }
  for (let n: u32 = 0; n < 256; n++) {
    let c = load<u32>(table + (<usize>n << 2));
    for (let t: usize = 1; t < 8; t++) {
      c = load<u32>(table + ((<usize>c & 0xff) << 2)) ^ (c >>> 8);
      store<u32>(table + (t << 10) + (<usize>n << 2), c);
    }
  }
  ready = true;
}

@inline
function t(i: usize, b: u32): u32 {
  return load<u32>(table + (i << 10) + (<usize>(b & 0xff) << 2));
}

/** CRC-32 of `len` bytes at `ptr`, continuing from `crc` (0 to start). */
export function crc32(ptr: usize, len: usize, crc: u32 = 0): u32 {
  if (!ready) buildTable();
  let c = ~crc;
  let p = ptr;
  const end = ptr + len;
  while (p + 8 <= end) {
    const lo = load<u32>(p) ^ c;
    const hi = load<u32>(p, 4);
    c = t(7, lo) ^ t(6, lo >>> 8) ^ t(5, lo >>> 16) ^ t(4, lo >>> 24) ^
      t(3, hi) ^ t(2, hi >>> 8) ^ t(1, hi >>> 16) ^ t(0, hi >>> 24);
    p += 8;
  }
  while (p < end) {
    c = t(0, c ^ <u32>load<u8>(p)) ^ (c >>> 8);
    p++;
  }
  return ~c;
}
