// A stable merge sort of u32 indexes by f64 keys, descending (equal keys keep their
// order), over static buffers: the features' ranking (extract.ts) and the matcher's.

import { Block, staticBlock } from './block';

const TMP: Block = staticBlock();

/** Sorts the `n` u32 indexes at `idx` by keys[idx] (f64 at `keys`), largest first, stably. */
export function sortByKeyDescending(idx: usize, n: i32, keys: usize): void {
  if (n < 2) return;
  const tmp = TMP.reserve(<usize>n << 2);
  let src = idx;
  let dst = tmp;
  for (let width = 1; width < n; width <<= 1) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = lo + width < n ? lo + width : n;
      const hi = lo + 2 * width < n ? lo + 2 * width : n;
      let i = lo;
      let j = mid;
      let k = lo;
      while (i < mid && j < hi) {
        const a = load<u32>(src + (<usize>i << 2));
        const b = load<u32>(src + (<usize>j << 2));
        // take from the right only when strictly larger: stable
        if (load<f64>(keys + (<usize>b << 3)) > load<f64>(keys + (<usize>a << 3))) {
          store<u32>(dst + (<usize>k << 2), b);
          j++;
        } else {
          store<u32>(dst + (<usize>k << 2), a);
          i++;
        }
        k++;
      }
      while (i < mid) { store<u32>(dst + (<usize>k << 2), load<u32>(src + (<usize>i << 2))); i++; k++; }
      while (j < hi) { store<u32>(dst + (<usize>k << 2), load<u32>(src + (<usize>j << 2))); j++; k++; }
    }
    const t = src;
    src = dst;
    dst = t;
  }
  if (src != idx) memory.copy(idx, src, <usize>n << 2);
}
