// PDQ, Meta's 256-bit perceptual hash, bit for bit as its reference computes it
// (pdqHash256FromFloatLuma after fillFloatLumaFromRGB, over the full-resolution pixels):
//
//   1. luma in f32 (luma.ts);
//   2. the Jarosz filter: box passes along rows, columns, rows, columns (jarosz.ts);
//   3. decimation to 64 x 64, taking pixel ((int)((i + 0.5) * dim / 64)) on each axis;
//      a 64 x 64 image is taken as it is, unfiltered, as Meta's code does;
//   4. the quality score and the 16 x 16 DCT (dct.ts);
//   5. a bit per coefficient above the median, and the dihedral variants (bits.ts).
//   Images under 5 pixels on a side give hash 0 and quality 0.
//
// The stages are streamed: eight rows at a time go through the luma and the first row
// pass, into the first column pass's ring of rows; its output rows, eight at a time,
// through the second row pass, of which only the 64 sampled columns are divided out and
// go on to the second column pass, of which only the 64 sampled rows are kept. Memory
// is a few rows wide, not the image's size, and every value kept is the one Meta's
// full-size buffers hold at that place.
import { deinterleaveRows, ELEMENT, GROUP, interleaveRows, lumaAt, lumaInterleaved } from './luma';
import { boxInterleaved, ColumnBox, windowFor } from './jarosz';
import { dct64To16, quality64 } from './dct';
import { bitsFromDct, dihedral } from './bits';

const MIN_DIM: i32 = 5;

/** The decimated 64 x 64 image (f32, row-major). */
const IMAGE64: usize = memory.data(64 * 64 * 4);
/** Its 16 x 16 DCT and one transform of it (f32). */
const DCT16: usize = memory.data(16 * 16 * 4);
const DCT16_AUX: usize = memory.data(16 * 16 * 4);
/** The answer: 8 hashes of 32 bytes (pdqFromPixels fills the first), then the quality (i32). */
const RESULT: usize = memory.data(8 * 32 + 4);
/** Sampled column and row indexes (i32). */
const COLS: usize = memory.data(64 * 4);
const ROWS: usize = memory.data(64 * 4);
/** One output row of the second column pass (64 f32). */
const ROW64: usize = memory.data(64 * 4);
/** The second row pass's output at the sampled columns: 64 elements of a group. */
const SAMPLED: usize = memory.data(64 * <i32>ELEMENT);
/** Addresses of a group's rows (pixel rows, ring slots or staged rows). */
const ROW_PTRS: usize = memory.data(GROUP * sizeof<usize>());

const COLUMNS_1: ColumnBox = changetype<ColumnBox>(memory.data(offsetof<ColumnBox>()));
const COLUMNS_2: ColumnBox = changetype<ColumnBox>(memory.data(offsetof<ColumnBox>()));

// Grow-only blocks: the interleaved group of the first row pass (input and output),
// that of the second (input), and the GROUP staged rows waiting for the second.
let lanesA: usize = 0;
let lanesB: usize = 0;
let lanesC: usize = 0;
let lanesCap: usize = 0;
let staged: usize = 0;
let stagedCap: usize = 0;

let width: i32 = 0;
let rowWindow: i32 = 0;
let stagedRows: i32 = 0;
let nextSample: i32 = 0;

function grow(w: i32): void {
  const need = <usize>w * ELEMENT;
  if (need > lanesCap) {
    if (lanesA != 0) {
      heap.free(lanesA);
      heap.free(lanesB);
      heap.free(lanesC);
      heap.free(staged);
    }
    lanesA = heap.alloc(need);
    lanesB = heap.alloc(need);
    lanesC = heap.alloc(need);
    // staged rows past the last real one feed unused lanes: zeros, not stale bytes
    staged = heap.alloc(need);
    memory.fill(staged, 0, need);
    lanesCap = need;
  }
}

/** Sample index i of an axis of `dim` pixels, as Meta's decimateFloat computes it (in f64). */
@inline
function sampleAt(i: i32, dim: i32): i32 {
  return <i32>(((<f64>i + 0.5) * <f64>dim) / 64.0);
}

@inline
function setRowPtr(k: i32, p: usize): void {
  store<usize>(ROW_PTRS + <usize>k * sizeof<usize>(), p);
}

/** An output row of the second column pass: kept as every 64 x 64 row that samples it. */
function takeFinalRow(index: i32): void {
  while (nextSample < 64 && load<i32>(ROWS + (<usize>nextSample << 2)) == index) {
    memory.copy(IMAGE64 + (<usize>(nextSample * 64) << 2), ROW64, 64 * 4);
    nextSample++;
  }
}

/** The second row pass over the staged rows (the first `n` are real); its sampled columns go down the second column pass. */
function secondRowPass(n: i32): void {
  for (let k = 0; k < GROUP; k++) setRowPtr(k, staged + (<usize>k * <usize>width << 2));
  interleaveRows(ROW_PTRS, width, lanesC);
  boxInterleaved(lanesC, SAMPLED, width, rowWindow, COLS);
  for (let k = 0; k < n; k++) {
    const dst = COLUMNS_2.slotFor(COLUMNS_2.pushed);
    for (let c = 0; c < 64; c++) {
      store<f32>(dst + (<usize>c << 2), load<f32>(SAMPLED + <usize>c * ELEMENT + (<usize>k << 2)));
    }
    const index = COLUMNS_2.push(ROW64);
    if (index >= 0) takeFinalRow(index);
  }
}

@inline
function stagedSlot(): usize {
  return staged + (<usize>stagedRows * <usize>width << 2);
}

/** An output row of the first column pass (written at its staged slot): on to the second row pass, GROUP at a time. */
function takeFirstPassRow(): void {
  stagedRows++;
  if (stagedRows == GROUP) {
    secondRowPass(GROUP);
    stagedRows = 0;
  }
}

/** Steps 1-3: the decimated 64 x 64 luma image of the pixels at `src` into IMAGE64. */
function downsample(src: usize, w: i32, h: i32, channels: i32): void {
  const rowBytes = <usize>w * <usize>channels;
  if (w == 64 && h == 64) {
    for (let i = 0; i < 64 * 64; i++) store<f32>(IMAGE64 + (<usize>i << 2), lumaAt(src + <usize>(i * channels), channels));
    return;
  }
  width = w;
  rowWindow = windowFor(w);
  grow(w);
  for (let i = 0; i < 64; i++) {
    store<i32>(COLS + (<usize>i << 2), sampleAt(i, w));
    store<i32>(ROWS + (<usize>i << 2), sampleAt(i, h));
  }
  const colWindow = windowFor(h);
  COLUMNS_1.start(w, h, colWindow);
  COLUMNS_2.start(64, h, colWindow);
  stagedRows = 0;
  nextSample = 0;
  for (let r0 = 0; r0 < h; r0 += GROUP) {
    const n = h - r0 < GROUP ? h - r0 : GROUP;
    // lanes past the last row repeat it; their results are not used
    for (let k = 0; k < GROUP; k++) setRowPtr(k, src + <usize>(r0 + (k < n ? k : n - 1)) * rowBytes);
    lumaInterleaved(ROW_PTRS, w, channels, lanesA);
    boxInterleaved(lanesA, lanesB, w, rowWindow, 0);
    for (let k = 0; k < n; k++) setRowPtr(k, COLUMNS_1.slotFor(r0 + k));
    deinterleaveRows(lanesB, w, n, ROW_PTRS);
    for (let k = 0; k < n; k++) {
      if (COLUMNS_1.push(stagedSlot()) >= 0) takeFirstPassRow();
    }
  }
  const tail1 = COLUMNS_1.tail();
  for (let k = 0; k < tail1; k++) {
    COLUMNS_1.drain(k, stagedSlot());
    takeFirstPassRow();
  }
  if (stagedRows > 0) {
    secondRowPass(stagedRows);
    stagedRows = 0;
  }
  const tail2 = COLUMNS_2.tail();
  for (let k = 0; k < tail2; k++) takeFinalRow(COLUMNS_2.drain(k, ROW64));
}

/** Steps 1-4 into DCT16; returns the quality, or -1 for an image under 5 pixels on a side. */
function coefficients(src: usize, w: i32, h: i32, channels: i32): i32 {
  if (w < MIN_DIM || h < MIN_DIM) return -1;
  downsample(src, w, h, channels);
  const q = quality64(IMAGE64);
  dct64To16(IMAGE64, DCT16);
  return q;
}

/**
 * The PDQ hash of `width` x `height` pixels of `channels` (1 grey, 3 RGB, 4 RGBA
 * composited over white) bytes at `src`: returns a pointer to 32 hash bytes (Meta's hex
 * order) followed by the quality (i32).
 */
export function pdqFromPixels(src: usize, w: i32, h: i32, channels: i32): usize {
  const q = coefficients(src, w, h, channels);
  if (q < 0) {
    memory.fill(RESULT, 0, 32);
    store<i32>(RESULT + 8 * 32, 0);
  } else {
    bitsFromDct(DCT16, RESULT);
    store<i32>(RESULT + 8 * 32, q);
  }
  return RESULT;
}

/**
 * The eight dihedral PDQ hashes (original, rotate 90, 180, 270, flip X, flip Y, flip +1,
 * flip -1) of the pixels, from one DCT: a pointer to 8 x 32 bytes, then the quality (i32).
 */
export function pdqDihedralFromPixels(src: usize, w: i32, h: i32, channels: i32): usize {
  const q = coefficients(src, w, h, channels);
  if (q < 0) {
    memory.fill(RESULT, 0, 8 * 32 + 4);
    return RESULT;
  }
  bitsFromDct(DCT16, RESULT);
  for (let t = 1; t < 8; t++) {
    dihedral(DCT16, DCT16_AUX, t);
    bitsFromDct(DCT16_AUX, RESULT + <usize>(t * 32));
  }
  store<i32>(RESULT + 8 * 32, q);
  return RESULT;
}
