// PDQ stage 2: the Jarosz filter, a box filter run twice along rows and twice along
// columns (rows, columns, rows, columns), with the window `(dim + 127) / 128` of each
// axis, exactly as Meta's box1DFloat computes it: one running f32 sum per line, which
// first grows over the first half window without writing (half = (window + 2) / 2),
// then writes sum / count while the window fills, then adds the entering and subtracts
// the leaving value (in that order) and writes sum / window, then only subtracts while
// the window empties past the end. The float rounding of that running sum is part of
// the hash, so every step here is the same f32 operation in the same order.
//
// Rows: a group of eight rows at a time, interleaved (lane k of element j = row k,
// column j), one running sum per lane. Columns: streamed row by row (a ring of the last
// window + GROUP rows), one running sum per column, so no full-size buffer is needed.

import { ELEMENT, GROUP } from './luma';

/** The filter window along an axis of `dim` pixels for PDQ's 64 output samples. */
@inline
export function windowFor(dim: i32): i32 {
  return (dim + 127) / 128;
}

// The row pass writes an element's output through this: every element to out + 32 oi,
// or (with a column list) only the listed columns, to out + 32 (list index).
@inline
function emitVectors(out: usize, oi: i32, cols: usize, next: i32, s0: v128, s1: v128, count: i32): i32 {
  const c = f32x4.splat(<f32>count);
  if (cols == 0) {
    const q = out + <usize>oi * ELEMENT;
    v128.store(q, f32x4.div(s0, c));
    v128.store(q, f32x4.div(s1, c), 16);
    return next;
  }
  while (next < 64 && load<i32>(cols + (<usize>next << 2)) == oi) {
    const q = out + <usize>next * ELEMENT;
    v128.store(q, f32x4.div(s0, c));
    v128.store(q, f32x4.div(s1, c), 16);
    next++;
  }
  return next;
}

@inline
function emitLane(out: usize, oi: i32, cols: usize, next: i32, sum: f32, count: i32): i32 {
  if (cols == 0) {
    store<f32>(out + <usize>oi * ELEMENT, sum / <f32>count);
    return next;
  }
  while (next < 64 && load<i32>(cols + (<usize>next << 2)) == oi) {
    store<f32>(out + <usize>next * ELEMENT, sum / <f32>count);
    next++;
  }
  return next;
}

/**
 * One box pass along `len` elements of a group of GROUP interleaved lines (ELEMENT bytes
 * per element), `inp` to `out`: every element, or with `cols` (64 nondecreasing i32
 * column indexes) only those, in list order. Two vectors of four lanes run side by
 * side, two independent chains of additions.
 */
export function boxInterleaved(inp: usize, out: usize, len: i32, window: i32, cols: usize): void {
  const half = (window + 2) / 2;
  const fill = half - 1;
  const grow = window - half + 1;
  const full = len - window;
  if (ASC_FEATURE_SIMD) {
    let s0 = f32x4.splat(0.0);
    let s1 = f32x4.splat(0.0);
    let count = 0;
    let ri: usize = inp;
    let li: usize = inp;
    let oi = 0;
    let next = 0;
    for (let i = 0; i < fill; i++) {
      s0 = f32x4.add(s0, v128.load(ri));
      s1 = f32x4.add(s1, v128.load(ri, 16));
      count++;
      ri += ELEMENT;
    }
    for (let i = 0; i < grow; i++) {
      s0 = f32x4.add(s0, v128.load(ri));
      s1 = f32x4.add(s1, v128.load(ri, 16));
      count++;
      next = emitVectors(out, oi, cols, next, s0, s1, count);
      ri += ELEMENT;
      oi++;
    }
    for (let i = 0; i < full; i++) {
      s0 = f32x4.add(s0, v128.load(ri));
      s1 = f32x4.add(s1, v128.load(ri, 16));
      s0 = f32x4.sub(s0, v128.load(li));
      s1 = f32x4.sub(s1, v128.load(li, 16));
      next = emitVectors(out, oi, cols, next, s0, s1, count);
      ri += ELEMENT;
      li += ELEMENT;
      oi++;
    }
    for (let i = 0; i < fill; i++) {
      s0 = f32x4.sub(s0, v128.load(li));
      s1 = f32x4.sub(s1, v128.load(li, 16));
      count--;
      next = emitVectors(out, oi, cols, next, s0, s1, count);
      li += ELEMENT;
      oi++;
    }
  } else {
    for (let k: usize = 0; k < <usize>GROUP; k++) {
      let sum: f32 = 0.0;
      let count = 0;
      let ri: usize = inp + (k << 2);
      let li: usize = ri;
      const o = out + (k << 2);
      let oi = 0;
      let next = 0;
      for (let i = 0; i < fill; i++) {
        sum += load<f32>(ri);
        count++;
        ri += ELEMENT;
      }
      for (let i = 0; i < grow; i++) {
        sum += load<f32>(ri);
        count++;
        next = emitLane(o, oi, cols, next, sum, count);
        ri += ELEMENT;
        oi++;
      }
      for (let i = 0; i < full; i++) {
        sum += load<f32>(ri);
        sum -= load<f32>(li);
        next = emitLane(o, oi, cols, next, sum, count);
        ri += ELEMENT;
        li += ELEMENT;
        oi++;
      }
      for (let i = 0; i < fill; i++) {
        sum -= load<f32>(li);
        count--;
        next = emitLane(o, oi, cols, next, sum, count);
        li += ELEMENT;
        oi++;
      }
    }
  }
}

/**
 * sums[j] (+= add[j]) (-= sub[j]) for j < width, then, when `out` is not 0,
 * out[j] = sums[j] / count. `add` or `sub` 0: that step is skipped.
 */
function columnStep(sums: usize, add: usize, sub: usize, out: usize, width: i32, count: i32): void {
  const c = <f32>count;
  let j = 0;
  if (ASC_FEATURE_SIMD) {
    const cv = f32x4.splat(c);
    for (; j + 4 <= width; j += 4) {
      const o = <usize>j << 2;
      let s = v128.load(sums + o);
      if (add != 0) s = f32x4.add(s, v128.load(add + o));
      if (sub != 0) s = f32x4.sub(s, v128.load(sub + o));
      v128.store(sums + o, s);
      if (out != 0) v128.store(out + o, f32x4.div(s, cv));
    }
  }
  for (; j < width; j++) {
    const o = <usize>j << 2;
    let s = load<f32>(sums + o);
    if (add != 0) s += load<f32>(add + o);
    if (sub != 0) s -= load<f32>(sub + o);
    store<f32>(sums + o, s);
    if (out != 0) store<f32>(out + o, s / c);
  }
}

/**
 * A box pass down the columns of a `length`-row image `width` values wide, fed one row
 * at a time. The caller writes row r into slotFor(r) (up to GROUP rows ahead), then calls push; each call that
 * completes an output row writes it to `out` and returns its index (-1 otherwise).
 * After the last row, drain(k, out) for k < tail() gives the final rows.
 */
@unmanaged
export class ColumnBox {
  ring: usize = 0;
  ringCap: usize = 0;
  sums: usize = 0;
  sumsCap: usize = 0;
  width: i32 = 0;
  length: i32 = 0;
  window: i32 = 0;
  half: i32 = 0;
  slots: i32 = 0;
  pushed: i32 = 0;

  /** Starts a pass (reusing its blocks when large enough). */
  start(width: i32, length: i32, window: i32): void {
    this.width = width;
    this.length = length;
    this.window = window;
    this.half = (window + 2) / 2;
    // the rows of a group are written before they are pushed: room for them beside the window
    this.slots = window + GROUP;
    this.pushed = 0;
    const ringNeed = <usize>this.slots * <usize>width << 2;
    if (ringNeed > this.ringCap) {
      if (this.ring != 0) heap.free(this.ring);
      this.ring = heap.alloc(ringNeed);
      this.ringCap = ringNeed;
    }
    const sumsNeed = <usize>width << 2;
    if (sumsNeed > this.sumsCap) {
      if (this.sums != 0) heap.free(this.sums);
      this.sums = heap.alloc(sumsNeed);
      this.sumsCap = sumsNeed;
    }
    memory.fill(this.sums, 0, sumsNeed);
  }

  /** Where input row r goes. */
  @inline
  slotFor(r: i32): usize {
    return this.ring + (<usize>(r % this.slots) * <usize>this.width << 2);
  }

  /** Takes the row written to slotFor(pushed); returns the index of the output row written to `out`, or -1. */
  push(out: usize): i32 {
    const r = this.pushed++;
    const row = this.slotFor(r);
    if (r < this.half - 1) {
      columnStep(this.sums, row, 0, 0, this.width, 0);
      return -1;
    }
    if (r < this.window) {
      columnStep(this.sums, row, 0, out, this.width, r + 1);
    } else {
      columnStep(this.sums, row, this.slotFor(r - this.window), out, this.width, this.window);
    }
    return r - this.half + 1;
  }

  /** Output rows still to come after the last push. */
  @inline
  tail(): i32 {
    return this.half - 1;
  }

  /** The k-th of the final rows into `out`; returns its index. */
  drain(k: i32, out: usize): i32 {
    const leaving = this.length - this.window + k;
    columnStep(this.sums, 0, this.slotFor(leaving), out, this.width, this.window - 1 - k);
    return this.length - this.half + 1 + k;
  }
}
