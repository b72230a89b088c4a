// PDQ stage 4: 256 bits from the 16 x 16 DCT coefficients, one per coefficient, set
// when it is above the median (Torben Mogensen's selection, which returns an element
// of the input, as Meta's torben() does), and the seven other dihedral versions of the
// coefficients (Meta's dct16OriginalTo*): a rotation or flip of the image only
// transposes the 16 x 16 block and negates the coefficients of odd frequency along a
// reversed axis, so all eight hashes come from one DCT.
//
// Bit layout as Meta's Hash256: bit k = i * 16 + j is bit (k & 15) of 16-bit word k >> 4;
// the 32 output bytes are the words from 15 down to 0, each high byte first, which is
// the order of Meta's hex text (so the hex of the bytes is Meta's hex).

/** The median of the `n` f32 values at `m` (Torben's algorithm, no reordering). */
export function torbenMedian(m: usize, n: i32): f32 {
  let min = load<f32>(m);
  let max = min;
  for (let i = 1; i < n; i++) {
    const v = load<f32>(m + (<usize>i << 2));
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const mid = (n + 1) / 2;
  let less = 0;
  let greater = 0;
  let equal = 0;
  let guess: f32 = 0.0;
  let maxBelow: f32 = 0.0;
  let minAbove: f32 = 0.0;
  while (true) {
    guess = (min + max) / <f32>2.0;
    less = 0;
    greater = 0;
    equal = 0;
    maxBelow = min;
    minAbove = max;
    for (let i = 0; i < n; i++) {
      const v = load<f32>(m + (<usize>i << 2));
      if (v < guess) {
        less++;
        if (v > maxBelow) maxBelow = v;
      } else if (v > guess) {
        greater++;
        if (v < minAbove) minAbove = v;
      } else {
        equal++;
      }
    }
    if (less <= mid && greater <= mid) break;
    if (less > greater) max = maxBelow;
    else min = minAbove;
  }
  if (less >= mid) return maxBelow;
  if (less + equal >= mid) return guess;
  return minAbove;
}

/** Writes the 32 hash bytes of the 16 x 16 f32 coefficients at `c` to `out`. */
export function bitsFromDct(c: usize, out: usize): void {
  const median = torbenMedian(c, 256);
  memory.fill(out, 0, 32);
  for (let k = 0; k < 256; k++) {
    if (load<f32>(c + (<usize>k << 2)) > median) {
      const b = k & 15;
      const at = out + <usize>(2 * (15 - (k >> 4)) + (b < 8 ? 1 : 0));
      store<u8>(at, load<u8>(at) | (<u8>1 << <u8>(b & 7)));
    }
  }
}

// The eight dihedral transforms, in Meta's order: original, rotate 90, rotate 180,
// rotate 270, flip X, flip Y, flip +1 (transpose), flip -1 (anti-transpose).
// Per transform: whether the block is transposed, and which coefficients change sign
// (by the parity of row i and column j of the original block).
const NEGATE_EVEN_J: i32 = 1;
const NEGATE_EVEN_I: i32 = 2;
const NEGATE_ODD_SUM: i32 = 4;

/** Transposed (1) or not (0) for transform t. */
const TRANSPOSED: StaticArray<i32> = [0, 1, 0, 1, 0, 0, 1, 1];
/** Sign rule for transform t. */
const SIGNS: StaticArray<i32> = [0, NEGATE_EVEN_J, NEGATE_ODD_SUM, NEGATE_EVEN_I, NEGATE_EVEN_I, NEGATE_EVEN_J, 0, NEGATE_ODD_SUM];

/** The coefficients of dihedral transform `t` (0-7) of the 16 x 16 block at `a`, into `b`. */
export function dihedral(a: usize, b: usize, t: i32): void {
  const transposed = TRANSPOSED[t];
  const signs = SIGNS[t];
  for (let i = 0; i < 16; i++) {
    for (let j = 0; j < 16; j++) {
      let v = load<f32>(a + (<usize>(i * 16 + j) << 2));
      let negate = false;
      if (signs == NEGATE_EVEN_J) negate = (j & 1) == 0;
      else if (signs == NEGATE_EVEN_I) negate = (i & 1) == 0;
      else if (signs == NEGATE_ODD_SUM) negate = ((i + j) & 1) == 1;
      if (negate) v = -v;
      const at = transposed ? j * 16 + i : i * 16 + j;
      store<f32>(b + (<usize>at << 2), v);
    }
  }
}
