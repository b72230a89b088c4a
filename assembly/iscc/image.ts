// The ISCC Image-Code (ISO 24138; iscc-core code_content_image.py) and the image
// normalisation of the ISCC SDK (iscc-sdk image.py image_normalize) as Pillow computes
// it, bit for bit:
//
//   1. transparency over white: Pillow's paste with the alpha as mask, per channel
//      DIV255(255 * (255 - a) + c * a) (libImaging Paste.c BLEND);
//   2. the uniform border trimmed: the bounding box of the pixels whose colour (after 1)
//      differs at all from the top-left pixel's (ImageChops.difference, getbbox); a
//      uniform image is kept whole;
//   3. grey as Pillow's convert("L"): (R * 19595 + G * 38470 + B * 7471 + 0x8000) >> 16
//      (Convert.c L24);
//   4. 32 x 32 as Pillow's resize(BICUBIC) (Resample.c): per axis, a bicubic (a = -0.5)
//      filter widened by the scale, its weights normalised in double precision and
//      rounded to 22-bit fixed point; the horizontal pass first (rounded and clipped
//      to 8 bits), then the vertical one; an axis already 32 long is not resampled.
//
// Then the Image-Code's hash: a 32 x 32 DCT (the reference's recursive fast DCT, in
// its order of operations, so the doubles are the same), and for the four 8 x 8 blocks
// at (0,0), (1,0), (0,1), (1,1) one bit per coefficient: above the block's median.
//
// Pixels are 8-bit grey (1 channel), RGB (3) or RGBA (4), row-major, as the host's
// decoder gives them (EXIF orientation already applied).

/** The trimmed box: x0, y0, x1, y1 (i32; x1, y1 exclusive). */
const BOX: usize = memory.data(16, 16);
/** The 32 x 32 grey pixels. */
const GREY: usize = memory.data(1024, 16);
/** The DCT: the matrix (f64) and the recursion's work area. */
const DCT_MATRIX: usize = memory.data(1024 * 8, 16);
const DCT_WORK: usize = memory.data(4 * 32 * 8, 16);

// Work buffers of the resampler (coefficients, a grey row, the horizontal pass's
// output): they grow to the largest image seen and are kept.
let workPtr: usize = 0;
let workCap: usize = 0;
function work(len: usize): usize {
  if (len > workCap) {
    if (workPtr != 0) heap.free(workPtr);
    workPtr = heap.alloc(len);
    workCap = len;
  }
  return workPtr;
}

// @ts-ignore: decorator
@inline function blendWhite(c: u32, a: u32): u32 {
  const t = 255 * (255 - a) + c * a + 128;
  return ((t >> 8) + t) >> 8;
}

/** The colour of pixel i over white, as 0x00BBGGRR. */
// @ts-ignore: decorator
@inline function colourAt(src: usize, i: usize, channels: i32): u32 {
  if (channels == 1) return <u32>load<u8>(src + i) * 0x010101;
  if (channels == 3) {
    const p = src + i * 3;
    return <u32>load<u8>(p) | (<u32>load<u8>(p, 1) << 8) | (<u32>load<u8>(p, 2) << 16);
  }
  const px = load<u32>(src + (i << 2));
  const a = px >> 24;
  if (a == 255) return px & 0xffffff;
  return blendWhite(px & 255, a) | (blendWhite((px >> 8) & 255, a) << 8) | (blendWhite((px >> 16) & 255, a) << 16);
}

// @ts-ignore: decorator
@inline function greyOf(rgb: u32): u8 {
  return <u8>(((rgb & 255) * 19595 + ((rgb >> 8) & 255) * 38470 + ((rgb >> 16) & 255) * 7471 + 0x8000) >> 16);
}

/** The first x in [from, to) of row y whose colour differs from `bg`, or -1. */
function firstDiff(src: usize, width: i32, y: i32, from: i32, to: i32, channels: i32, bg: u32): i32 {
  const row = <usize>y * <usize>width;
  for (let x = from; x < to; x++) if (colourAt(src, row + <usize>x, channels) != bg) return x;
  return -1;
}

/** The last x in [from, to) of row y whose colour differs from `bg`, or -1. */
function lastDiff(src: usize, width: i32, y: i32, from: i32, to: i32, channels: i32, bg: u32): i32 {
  const row = <usize>y * <usize>width;
  for (let x = to - 1; x >= from; x--) if (colourAt(src, row + <usize>x, channels) != bg) return x;
  return -1;
}

/**
 * The box left after trimming the uniform border (step 2), written to BOX; returns
 * BOX. Rows inside the box are read only left of the leftmost and right of the
 * rightmost difference found so far, so an image without a border costs one row and
 * one column of reads.
 */
export function imageTrimBox(src: usize, width: i32, height: i32, channels: i32): usize {
  const bg = colourAt(src, 0, channels);
  let top = -1, left = 0, right = 0;
  for (let y = 0; y < height; y++) {
    const x = firstDiff(src, width, y, 0, width, channels, bg);
    if (x >= 0) {
      top = y;
      left = x;
      right = lastDiff(src, width, y, x, width, channels, bg);
      break;
    }
  }
  if (top < 0) {
    // uniform: Pillow's getbbox() is None and crop(None) keeps the whole image
    store<i32>(BOX, 0, 0); store<i32>(BOX, 0, 4); store<i32>(BOX, width, 8); store<i32>(BOX, height, 12);
    return BOX;
  }
  let bottom = top;
  for (let y = height - 1; y > top; y--) {
    const x = firstDiff(src, width, y, 0, width, channels, bg);
    if (x >= 0) {
      bottom = y;
      if (x < left) left = x;
      const r = lastDiff(src, width, y, x, width, channels, bg);
      if (r > right) right = r;
      break;
    }
  }
  for (let y = top + 1; y < bottom; y++) {
    if (left > 0) {
      const x = firstDiff(src, width, y, 0, left, channels, bg);
      if (x >= 0) left = x;
    }
    if (right < width - 1) {
      const r = lastDiff(src, width, y, right + 1, width, channels, bg);
      if (r >= 0) right = r;
    }
  }
  store<i32>(BOX, left, 0); store<i32>(BOX, top, 4); store<i32>(BOX, right + 1, 8); store<i32>(BOX, bottom + 1, 12);
  return BOX;
}

// @ts-ignore: decorator
@inline function bicubic(x: f64): f64 {
  // Resample.c bicubic_filter, a = -0.5, its expressions as written
  if (x < 0.0) x = -x;
  if (x < 1.0) return ((-0.5 + 2.0) * x - (-0.5 + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * -0.5;
  return 0.0;
}

// @ts-ignore: decorator
@inline const PRECISION_BITS: i32 = 32 - 8 - 2;

/**
 * Pillow's precompute_coeffs and normalize_coeffs_8bpc for `inSize` -> 32: for each
 * output, its first input and count (bounds, 2 x i32) and the fixed-point weights
 * (i32, packed one output after another); \`stage\` holds one output's doubles (ksize
 * f64). Returns the number of weights.
 */
function coefficients(inSize: i32, bounds: usize, weights: usize, stage: usize): i32 {
  // (double)(in1 - in0) / outSize with in0 = 0, in1 = inSize
  const scale = <f64>inSize / 32.0;
  const filterscale = scale < 1.0 ? 1.0 : scale;
  const support = 2.0 * filterscale;
  const ss = 1.0 / filterscale;
  let at = 0;
  for (let xx = 0; xx < 32; xx++) {
    const center = 0.0 + (<f64>xx + 0.5) * scale;
    let xmin = <i32>(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    let xmax = <i32>(center + support + 0.5);
    if (xmax > inSize) xmax = inSize;
    xmax -= xmin;
    let ww = 0.0;
    const fixedAt = weights + (<usize>at << 2);
    for (let x = 0; x < xmax; x++) {
      const w = bicubic((<f64>(x + xmin) - center + 0.5) * ss);
      store<f64>(stage + (<usize>x << 3), w);
      ww += w;
    }
    for (let x = 0; x < xmax; x++) {
      let k = load<f64>(stage + (<usize>x << 3));
      if (ww != 0.0) k /= ww;
      const fixed = k < 0 ? <i32>(-0.5 + k * <f64>(1 << PRECISION_BITS)) : <i32>(0.5 + k * <f64>(1 << PRECISION_BITS));
      store<i32>(fixedAt + (<usize>x << 2), fixed);
    }
    store<i32>(bounds + (<usize>xx << 3), xmin);
    store<i32>(bounds + (<usize>xx << 3), xmax, 4);
    at += xmax;
  }
  return at;
}

// @ts-ignore: decorator
@inline function clip8(ss: i32): u8 {
  const v = ss >> PRECISION_BITS;
  return v < 0 ? 0 : v > 255 ? 255 : <u8>v;
}

/** Pillow's ksize: the most weights one output can have. */
// @ts-ignore: decorator
@inline function kernelSize(inSize: i32): i32 {
  const scale = <f64>inSize / 32.0;
  return <i32>Math.ceil(2.0 * (scale < 1.0 ? 1.0 : scale)) * 2 + 1;
}

// ---- grey rows ---------------------------------------------------------------------

// @ts-ignore: decorator
@inline const KR: i32 = 19595;
// @ts-ignore: decorator
@inline const KG: i32 = 38470;
// @ts-ignore: decorator
@inline const KB: i32 = 7471;

/** Grey of 16 pixels from their R, G, B bytes (SIMD build): L24 >> 16, exactly. */
// @ts-ignore: decorator
@inline function grey16(r: v128, g: v128, b: v128): v128 {
  const kr = i16x8.splat(<i16>KR), kg = i16x8.splat(<i16>KG), kb = i16x8.splat(<i16>KB), half = i32x4.splat(0x8000);
  const rl = i16x8.extend_low_i8x16_u(r), gl = i16x8.extend_low_i8x16_u(g), bl = i16x8.extend_low_i8x16_u(b);
  const rh = i16x8.extend_high_i8x16_u(r), gh = i16x8.extend_high_i8x16_u(g), bh = i16x8.extend_high_i8x16_u(b);
  const l0 = i32x4.shr_u(i32x4.add(i32x4.add(i32x4.extmul_low_i16x8_u(rl, kr), i32x4.extmul_low_i16x8_u(gl, kg)), i32x4.add(i32x4.extmul_low_i16x8_u(bl, kb), half)), 16);
  const l1 = i32x4.shr_u(i32x4.add(i32x4.add(i32x4.extmul_high_i16x8_u(rl, kr), i32x4.extmul_high_i16x8_u(gl, kg)), i32x4.add(i32x4.extmul_high_i16x8_u(bl, kb), half)), 16);
  const l2 = i32x4.shr_u(i32x4.add(i32x4.add(i32x4.extmul_low_i16x8_u(rh, kr), i32x4.extmul_low_i16x8_u(gh, kg)), i32x4.add(i32x4.extmul_low_i16x8_u(bh, kb), half)), 16);
  const l3 = i32x4.shr_u(i32x4.add(i32x4.add(i32x4.extmul_high_i16x8_u(rh, kr), i32x4.extmul_high_i16x8_u(gh, kg)), i32x4.add(i32x4.extmul_high_i16x8_u(bh, kb), half)), 16);
  return i8x16.narrow_i16x8_u(i16x8.narrow_i32x4_u(l0, l1), i16x8.narrow_i32x4_u(l2, l3));
}

/** Steps 1 and 3 for `n` pixels at `p` (a row of the crop) into `out`, one byte each. */
function greyRow(p: usize, n: i32, channels: i32, out: usize): void {
  let x = 0;
  if (channels == 1) {
    memory.copy(out, p, <usize>n);
    return;
  }
  if (channels == 3) {
    if (ASC_FEATURE_SIMD) {
      for (; x + 16 <= n; x += 16) {
        const q = p + <usize>x * 3;
        const a = v128.load(q), b = v128.load(q, 16), c = v128.load(q, 32);
        const r = i8x16.shuffle(i8x16.shuffle(a, b, 0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 0, 0, 0, 0, 0), c, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 17, 20, 23, 26, 29);
        const g = i8x16.shuffle(i8x16.shuffle(a, b, 1, 4, 7, 10, 13, 16, 19, 22, 25, 28, 31, 0, 0, 0, 0, 0), c, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 18, 21, 24, 27, 30);
        const bl = i8x16.shuffle(i8x16.shuffle(a, b, 2, 5, 8, 11, 14, 17, 20, 23, 26, 29, 0, 0, 0, 0, 0, 0), c, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 19, 22, 25, 28, 31);
        v128.store(out + <usize>x, grey16(r, g, bl));
      }
    }
    for (; x < n; x++) {
      const q = p + <usize>x * 3;
      store<u8>(out + <usize>x, <u8>((<i32>load<u8>(q) * KR + <i32>load<u8>(q, 1) * KG + <i32>load<u8>(q, 2) * KB + 0x8000) >>> 16));
    }
    return;
  }
  if (ASC_FEATURE_SIMD) {
    const opaque = i8x16.splat(-1);
    for (; x + 16 <= n; x += 16) {
      const q = p + (<usize>x << 2);
      const a = v128.load(q), b = v128.load(q, 16), c = v128.load(q, 32), d = v128.load(q, 48);
      const al = i8x16.shuffle(i8x16.shuffle(a, b, 3, 7, 11, 15, 19, 23, 27, 31, 0, 0, 0, 0, 0, 0, 0, 0), i8x16.shuffle(c, d, 3, 7, 11, 15, 19, 23, 27, 31, 0, 0, 0, 0, 0, 0, 0, 0), 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
      if (!i8x16.all_true(i8x16.eq(al, opaque))) break; // transparency: the scalar loop blends the rest
      const r = i8x16.shuffle(i8x16.shuffle(a, b, 0, 4, 8, 12, 16, 20, 24, 28, 0, 0, 0, 0, 0, 0, 0, 0), i8x16.shuffle(c, d, 0, 4, 8, 12, 16, 20, 24, 28, 0, 0, 0, 0, 0, 0, 0, 0), 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
      const g = i8x16.shuffle(i8x16.shuffle(a, b, 1, 5, 9, 13, 17, 21, 25, 29, 0, 0, 0, 0, 0, 0, 0, 0), i8x16.shuffle(c, d, 1, 5, 9, 13, 17, 21, 25, 29, 0, 0, 0, 0, 0, 0, 0, 0), 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
      const bl = i8x16.shuffle(i8x16.shuffle(a, b, 2, 6, 10, 14, 18, 22, 26, 30, 0, 0, 0, 0, 0, 0, 0, 0), i8x16.shuffle(c, d, 2, 6, 10, 14, 18, 22, 26, 30, 0, 0, 0, 0, 0, 0, 0, 0), 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
      v128.store(out + <usize>x, grey16(r, g, bl));
    }
  }
  for (; x < n; x++) store<u8>(out + <usize>x, greyOf(colourAt(p, <usize>x, 4)));
}

// ---- the resampler ------------------------------------------------------------------

/**
 * The SIMD build's form of one axis's weights: per output, its taps in blocks of 8
 * (zero past its count), each weight k split as k = a * 2^15 + b with 0 <= b < 2^15, a
 * block of eight a and one of eight b (i16), so that i32x4.dot_i16x8_s sums the
 * products exactly: sum(p * k) = sum(p * a) << 15 + sum(p * b), in wrapping i32
 * arithmetic, as the sum itself fits an i32 (Pillow's own accumulator).
 */
function splitWeights(bounds: usize, weights: usize, out: usize): void {
  let k = weights;
  let at = out;
  for (let xx = 0; xx < 32; xx++) {
    const n = load<i32>(bounds + (<usize>xx << 3), 4);
    const blocks = (n + 7) >> 3;
    for (let blk = 0; blk < blocks; blk++) {
      for (let j = 0; j < 8; j++) {
        const i = (blk << 3) + j;
        const w = i < n ? load<i32>(k + (<usize>i << 2)) : 0;
        store<i16>(at + (<usize>j << 1), <i16>(w >> 15));
        store<i16>(at + 16 + (<usize>j << 1), <i16>(w & 0x7fff));
      }
      at += 32;
    }
    k += <usize>n << 2;
  }
}

/** sum(grey[i] * k[i]) of one output of the horizontal pass, SIMD build (weights from splitWeights). */
// @ts-ignore: decorator
@inline function dotSplit(from: usize, blocks: i32, k: usize): i32 {
  let accA = i32x4.splat(0), accB = i32x4.splat(0), accC = i32x4.splat(0), accD = i32x4.splat(0);
  let blk = 0;
  // two blocks a step, into two pairs of sums: the adds of one do not wait on the other's
  for (; blk + 2 <= blocks; blk += 2) {
    const p0 = v128.load8x8_u(from + (<usize>blk << 3));
    const p1 = v128.load8x8_u(from + (<usize>blk << 3), 8);
    const w = k + (<usize>blk << 5);
    accA = i32x4.add(accA, i32x4.dot_i16x8_s(p0, v128.load(w)));
    accB = i32x4.add(accB, i32x4.dot_i16x8_s(p0, v128.load(w, 16)));
    accC = i32x4.add(accC, i32x4.dot_i16x8_s(p1, v128.load(w, 32)));
    accD = i32x4.add(accD, i32x4.dot_i16x8_s(p1, v128.load(w, 48)));
  }
  if (blk < blocks) {
    const p0 = v128.load8x8_u(from + (<usize>blk << 3));
    const w = k + (<usize>blk << 5);
    accA = i32x4.add(accA, i32x4.dot_i16x8_s(p0, v128.load(w)));
    accB = i32x4.add(accB, i32x4.dot_i16x8_s(p0, v128.load(w, 16)));
  }
  accA = i32x4.add(accA, accC);
  accB = i32x4.add(accB, accD);
  const a = i32x4.extract_lane(accA, 0) + i32x4.extract_lane(accA, 1) + i32x4.extract_lane(accA, 2) + i32x4.extract_lane(accA, 3);
  const b = i32x4.extract_lane(accB, 0) + i32x4.extract_lane(accB, 1) + i32x4.extract_lane(accB, 2) + i32x4.extract_lane(accB, 3);
  return (a << 15) + b;
}

/**
 * Steps 1, 3 and 4 over the box (x0, y0)-(x1, y1) of the image at `src`: the 32 x 32 grey
 * pixels Pillow's convert("L").resize((32, 32), BICUBIC) gives for that crop, written
 * to GREY; returns GREY.
 */
export function imageGrey32(src: usize, width: i32, height: i32, channels: i32, x0: i32, y0: i32, x1: i32, y1: i32): usize {
  const cw = x1 - x0;
  const ch = y1 - y0;
  const kh = kernelSize(cw);
  const kv = kernelSize(ch);
  // work: bounds (2 x 32 x 8 bytes), weights (32 ksize i32 per axis), their split form
  // (32 outputs x (ksize + 7) / 8 blocks x 32 bytes), one output's doubles, a grey row
  // with 16 bytes to spare (a block's read past a window's end), the horizontal pass's rows
  const splitBytes = <usize>32 * <usize>((kh + 7) >> 3) << 5;
  const boundsH = work(<usize>512 + (<usize>32 * <usize>(kh + kv) << 2) + splitBytes + (<usize>max(kh, kv) << 3) + <usize>cw + 16 + (<usize>ch << 5));
  const boundsV = boundsH + 256;
  const weightsH = boundsV + 256;
  const weightsV = weightsH + (<usize>32 * <usize>kh << 2);
  const split = weightsV + (<usize>32 * <usize>kv << 2);
  const stage = split + splitBytes;
  const grey = stage + (<usize>max(kh, kv) << 3);
  const rows = grey + <usize>cw + 16;
  const needH = cw != 32;
  const needV = ch != 32;
  coefficients(cw, boundsH, weightsH, stage);
  coefficients(ch, boundsV, weightsV, stage);
  if (ASC_FEATURE_SIMD) {
    splitWeights(boundsH, weightsH, split);
    memory.fill(grey + <usize>cw, 0, 16);
  }
  const yFirst = load<i32>(boundsV);
  const yLast = load<i32>(boundsV + 31 * 8) + load<i32>(boundsV + 31 * 8, 4);
  // horizontal pass (or the grey rows as they are), rows yFirst..yLast of the crop
  for (let y = yFirst; y < yLast; y++) {
    const line = src + (<usize>(y0 + y) * <usize>width + <usize>x0) * <usize>channels;
    const outRow = rows + (<usize>(y - yFirst) << 5);
    if (!needH) {
      greyRow(line, 32, channels, outRow);
      continue;
    }
    greyRow(line, cw, channels, grey);
    let k = ASC_FEATURE_SIMD ? split : weightsH;
    for (let xx = 0; xx < 32; xx++) {
      const xmin = load<i32>(boundsH + (<usize>xx << 3));
      const n = load<i32>(boundsH + (<usize>xx << 3), 4);
      const from = grey + <usize>xmin;
      let ss: i32 = 1 << (PRECISION_BITS - 1);
      if (ASC_FEATURE_SIMD) {
        const blocks = (n + 7) >> 3;
        ss += dotSplit(from, blocks, k);
        k += <usize>blocks << 5;
      } else {
        for (let i = 0; i < n; i++) ss += <i32>load<u8>(from + <usize>i) * load<i32>(k + (<usize>i << 2));
        k += <usize>n << 2;
      }
      store<u8>(outRow + <usize>xx, clip8(ss));
    }
  }
  // vertical pass
  if (!needV) {
    memory.copy(GREY, rows, 1024);
    return GREY;
  }
  let k = weightsV;
  for (let yy = 0; yy < 32; yy++) {
    const ymin = load<i32>(boundsV + (<usize>yy << 3)) - yFirst;
    const n = load<i32>(boundsV + (<usize>yy << 3), 4);
    for (let xx = 0; xx < 32; xx++) {
      let ss: i32 = 1 << (PRECISION_BITS - 1);
      let at = rows + (<usize>ymin << 5) + <usize>xx;
      for (let i = 0; i < n; i++) {
        ss += <i32>load<u8>(at) * load<i32>(k + (<usize>i << 2));
        at += 32;
      }
      store<u8>(GREY + (<usize>yy << 5) + <usize>xx, clip8(ss));
    }
    k += <usize>n << 2;
  }
  return GREY;
}

/** The 32 x 32 grey pixels of the normalised image: imageTrimBox then imageGrey32. */
export function imageNormalize(src: usize, width: i32, height: i32, channels: i32): usize {
  imageTrimBox(src, width, height, channels);
  return imageGrey32(src, width, height, channels, load<i32>(BOX), load<i32>(BOX, 4), load<i32>(BOX, 8), load<i32>(BOX, 12));
}

// ---- the Image-Code's hash ---------------------------------------------------------

// cos((i + 0.5) * pi / n) * 2.0 for n = 32, 16, 8, 4, 2 (i < n / 2), as Python's
// math.cos (glibc, correctly rounded) gives them; AssemblyScript's and V8's Math.cos
// differ from it in the last bit for two of them.
const COS2: usize = memory.data<f64>([
  1.9975909124103448, 1.978353019929562, 1.940062506389088, 1.8830881303660416,
  1.8079785862468867, 1.7154572200005442, 1.6064150629612899, 1.4819022507099182,
  1.3431179096940367, 1.191398608984867, 1.0282054883864433, 0.8551101868605644,
  0.6737797067844401, 0.48596035980652796, 0.2934609489107235, 0.09813534865483625,
  1.9903694533443939, 1.9138806714644176, 1.76384252869671, 1.546020906725474,
  1.268786568327291, 0.9427934736519956, 0.5805693545089247, 0.19603428065912154,
  1.9615705608064609, 1.6629392246050905, 1.1111404660392046, 0.39018064403225666,
  1.8477590650225735, 0.7653668647301797, 1.4142135623730951,
], 16);

/** Where the divisors for size n start in COS2. */
// @ts-ignore: decorator
@inline function cosAt(n: i32): usize {
  return COS2 + ((n == 32 ? 0 : n == 16 ? 16 : n == 8 ? 24 : n == 4 ? 28 : 30) << 3);
}

/**
 * iscc-core dct.py alg_dct (Nayuki's fast DCT) of the n doubles at `v` into `out`,
 * using `tmp` (4n doubles) for its halves.
 */
function dct(v: usize, n: i32, out: usize, tmp: usize): void {
  if (n == 1) {
    store<f64>(out, load<f64>(v));
    return;
  }
  const half = n >> 1;
  const alpha = tmp;
  const beta = tmp + (<usize>half << 3);
  const a = beta + (<usize>half << 3);
  const b = a + (<usize>half << 3);
  const c = cosAt(n);
  for (let i = 0; i < half; i++) {
    const x = load<f64>(v + (<usize>i << 3));
    const y = load<f64>(v + (<usize>(n - 1 - i) << 3));
    store<f64>(alpha + (<usize>i << 3), x + y);
    store<f64>(beta + (<usize>i << 3), (x - y) / load<f64>(c + (<usize>i << 3)));
  }
  dct(alpha, half, a, b + (<usize>half << 3));
  dct(beta, half, b, b + (<usize>half << 3));
  for (let i = 0; i < half - 1; i++) {
    store<f64>(out + (<usize>(2 * i) << 3), load<f64>(a + (<usize>i << 3)));
    store<f64>(out + (<usize>(2 * i + 1) << 3), load<f64>(b + (<usize>i << 3)) + load<f64>(b + (<usize>(i + 1) << 3)));
  }
  store<f64>(out + (<usize>(n - 2) << 3), load<f64>(a + (<usize>(half - 1) << 3)));
  store<f64>(out + (<usize>(n - 1) << 3), load<f64>(b + (<usize>(half - 1) << 3)));
}

const ROW: usize = memory.data(32 * 8, 16);
const ROW_OUT: usize = memory.data(32 * 8, 16);
const BLOCK: usize = memory.data(64 * 8, 16);

/**
 * The 256-bit Image-Code digest (to `out`, 32 bytes) of the 1024 grey pixels at `grey`
 * (iscc-core soft_hash_image_v0): DCT of each row, then of each column; per 8 x 8 block,
 * bit = coefficient > the block's median (the mean of its 32nd and 33rd smallest).
 */
export function imageHash(grey: usize, out: usize): void {
  const m = DCT_MATRIX;
  for (let y = 0; y < 32; y++) {
    for (let x = 0; x < 32; x++) store<f64>(ROW + (<usize>x << 3), <f64>load<u8>(grey + (<usize>(y * 32 + x))));
    dct(ROW, 32, ROW_OUT, DCT_WORK);
    memory.copy(m + (<usize>(y * 32) << 3), ROW_OUT, 256);
  }
  for (let x = 0; x < 32; x++) {
    for (let y = 0; y < 32; y++) store<f64>(ROW + (<usize>y << 3), load<f64>(m + (<usize>(y * 32 + x) << 3)));
    dct(ROW, 32, ROW_OUT, DCT_WORK);
    for (let y = 0; y < 32; y++) store<f64>(m + (<usize>(y * 32 + x) << 3), load<f64>(ROW_OUT + (<usize>y << 3)));
  }
  memory.fill(out, 0, 32);
  for (let s = 0; s < 4; s++) {
    const bx = s & 1, by = s >> 1; // (0,0), (1,0), (0,1), (1,1)
    for (let y = 0; y < 8; y++) {
      for (let x = 0; x < 8; x++) store<f64>(BLOCK + (<usize>(y * 8 + x) << 3), load<f64>(m + (<usize>((by + y) * 32 + bx + x) << 3)));
    }
    const med = median64(BLOCK);
    for (let i = 0; i < 64; i++) {
      if (load<f64>(BLOCK + (<usize>i << 3)) > med) {
        const n = s * 64 + i;
        const at = out + <usize>(n >> 3);
        store<u8>(at, load<u8>(at) | <u8>(<u32>0x80 >> <u32>(n & 7)));
      }
    }
  }
}

const SORTED: usize = memory.data(64 * 8, 16);

/** statistics.median of the 64 doubles at p: (sorted[31] + sorted[32]) / 2. */
function median64(p: usize): f64 {
  memory.copy(SORTED, p, 512);
  for (let i = 1; i < 64; i++) {
    const v = load<f64>(SORTED + (<usize>i << 3));
    let j = i - 1;
    while (j >= 0 && load<f64>(SORTED + (<usize>j << 3)) > v) {
      store<f64>(SORTED + (<usize>(j + 1) << 3), load<f64>(SORTED + (<usize>j << 3)));
      j--;
    }
    store<f64>(SORTED + (<usize>(j + 1) << 3), v);
  }
  return (load<f64>(SORTED + 31 * 8) + load<f64>(SORTED + 32 * 8)) / 2;
}
