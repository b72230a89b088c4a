// Features stage 1b (a query's option): the picture inside a frame or a screen. A copy
// shown in a wide plain frame, or inside a phone screenshot under a status bar and above
// a caption, is mostly not the picture: its strongest features sit on the frame's edge,
// the bar's icons and the text, and the picture itself is a third of the analysis image,
// its details a level or two below the original's. The host extracts the inner picture
// found here on its own, at the analysis size, and adds its features to the query's.
//
// The inner picture is found on the analysis image (grey, box-reduced, so JPEG noise is
// averaged away) by cutting away flat lines, as document-layout analysis cuts a page
// (XY-cut): a line (row or column within the current box) is flat when at most
// OUTLIER_SHARE of its pixels differ by more than TOLERANCE grey levels from its level:
// a plain frame, a margin, the gap between an app bar and the picture. The runs of lines
// that are not flat and are at least LONG_RUN of the box's extent (the picture; not a
// text line, an icon row or a status bar) are kept, from the first to the last, rows
// then columns, until the box stops changing. A box of MIN_AREA to MAX_AREA of the image
// is the inner picture; the whole image (nothing cut) or a sliver is none.

const TOLERANCE: f64 = 10.0;
const OUTLIER_SHARE: f64 = 0.01;
const LONG_RUN: f64 = 0.1;
const MIN_AREA: f64 = 0.03;
const MAX_AREA: f64 = 0.6;
const MIN_SIDE: i32 = 64;
const ROUNDS: i32 = 4;

/** The last search's box: left, top, right, bottom (exclusive), in analysis pixels; all 0 when none. */
const BOX: usize = memory.data(16);

/** The box innerPicture found (four i32: left, top, right, bottom in analysis pixels; right 0 when none). */
export function innerPictureBox(): usize {
  return BOX;
}

/** Clears the box (an image without an analysis image has no inner picture). */
export function noInnerPicture(): void {
  memory.fill(BOX, 0, 16);
}

/**
 * Whether the `n` pixels from `p`, `step` bytes apart, are one flat line: at most
 * OUTLIER_SHARE of them more than TOLERANCE from the line's level, the mean of 64 of its
 * pixels evenly spaced. A line of a picture fails within its first few pixels.
 */
function flatLine(p: usize, n: i32, step: usize): bool {
  const every = n > 64 ? n / 64 : 1;
  let sum: u32 = 0;
  let taken = 0;
  for (let k = 0; k < n; k += every) {
    sum += <u32>load<u8>(p + <usize>k * step);
    taken++;
  }
  const level = <f64>sum / <f64>taken;
  const allowed = <i32>(OUTLIER_SHARE * <f64>n);
  let outliers = 0;
  for (let k = 0; k < n; k++) {
    if (Math.abs(<f64>load<u8>(p + <usize>k * step) - level) > TOLERANCE && ++outliers > allowed) return false;
  }
  return true;
}

let spanStart: i32 = 0;
let spanEnd: i32 = 0;

/**
 * Over `count` lines (line i of `length` pixels at first + i * lineStep, its pixels
 * pixelStep apart), the span from the first to the last long run of lines that are not
 * flat, into spanStart / spanEnd (relative to the first line); false when there is none.
 */
function longRuns(first: usize, count: i32, lineStep: usize, length: i32, pixelStep: usize): bool {
  const long = <i32>Math.ceil(LONG_RUN * <f64>count);
  spanStart = -1;
  let run = -1;
  for (let i = 0; i <= count; i++) {
    const flat = i == count || flatLine(first + <usize>i * lineStep, length, pixelStep);
    if (!flat && run < 0) run = i;
    if (flat && run >= 0) {
      if (i - run >= long) {
        if (spanStart < 0) spanStart = run;
        spanEnd = i;
      }
      run = -1;
    }
  }
  return spanStart >= 0;
}

/** Finds the inner picture of the w x h grey image at `luma` (innerPictureBox); returns whether there is one. */
export function innerPicture(luma: usize, w: i32, h: i32): bool {
  noInnerPicture();
  let x0 = 0;
  let y0 = 0;
  let x1 = w;
  let y1 = h;
  for (let round = 0; round < ROUNDS; round++) {
    // rows of the box's columns, then columns of the rows kept
    if (!longRuns(luma + <usize>(y0 * w + x0), y1 - y0, <usize>w, x1 - x0, 1)) return false;
    const ya = y0 + spanStart;
    const yb = y0 + spanEnd;
    if (!longRuns(luma + <usize>(ya * w + x0), x1 - x0, 1, yb - ya, <usize>w)) return false;
    const xa = x0 + spanStart;
    const xb = x0 + spanEnd;
    const same = xa == x0 && xb == x1 && ya == y0 && yb == y1;
    x0 = xa;
    x1 = xb;
    y0 = ya;
    y1 = yb;
    if (same) break;
  }
  const area = <f64>(x1 - x0) * <f64>(y1 - y0) / (<f64>w * <f64>h);
  if (area < MIN_AREA || area > MAX_AREA || x1 - x0 < MIN_SIDE || y1 - y0 < MIN_SIDE) return false;
  store<i32>(BOX, x0);
  store<i32>(BOX, y0, 4);
  store<i32>(BOX, x1, 8);
  store<i32>(BOX, y1, 12);
  return true;
}
