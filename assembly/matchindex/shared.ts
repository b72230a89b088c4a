// Helpers shared by the two indexes of the matchindex module (index_core.ts, the
// band index; pdq_index.ts, the PDQ index): u32 fields of unmanaged records, the
// integer mixer, and the id table's probing (open addressing with linear probing
// over nonzero u32 references, any capacity by multiply-shift range reduction).

@inline export function ld(p: usize, off: usize): u32 {
  return load<u32>(p + off);
}
@inline export function st(p: usize, off: usize, v: u32): void {
  store<u32>(p + off, v);
}

@inline export function mix32(x: u32): u32 {
  x ^= x >>> 16;
  x *= 0x7feb352d;
  x ^= x >>> 15;
  x *= 0x846ca68b;
  x ^= x >>> 16;
  return x;
}

/** Home position of `id` in an id table of `cap` entries. */
@inline export function idHome(id: u32, cap: u32): u32 {
  return <u32>((<u64>mix32(id) * <u64>cap) >>> 32);
}

@inline export function idNext(i: u32, cap: u32): u32 {
  return i + 1 == cap ? 0 : i + 1;
}

/** Writes `ref` for `id` at the first empty position of its probe run. */
export function idPlace(tab: usize, cap: u32, id: u32, ref: u32): void {
  let i = idHome(id, cap);
  while (load<u32>(tab + (<usize>i << 2)) != 0) i = idNext(i, cap);
  store<u32>(tab + (<usize>i << 2), ref);
}

/** A zeroed id table of `cap` u32 entries. */
export function idTableAlloc(cap: u32): usize {
  const tab = heap.alloc(<usize>cap << 2);
  memory.fill(tab, 0, <usize>cap << 2);
  return tab;
}
