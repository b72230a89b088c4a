// Features stage 4: the Harris corner response of a FAST corner, the score features are
// ranked by (FAST's own score favours edges' ends and noise). Sobel gradients over the
// 7 x 7 block around the point, summed exactly in integers; R = det(M) - 0.04 tr(M)^2 in
// f64 (the sums are below 2^53), so both builds rank alike.

const K: f64 = 0.04;

/** The Harris response at (x, y) of the grey image at `img` (stride `stride`); needs 4 pixels of margin. */
export function harrisResponse(img: usize, stride: i32, x: i32, y: i32): f64 {
  let sxx: i64 = 0;
  let syy: i64 = 0;
  let sxy: i64 = 0;
  const s = <usize>stride;
  for (let dy = -3; dy <= 3; dy++) {
    let p = img + <usize>((y + dy) * stride + x - 3);
    for (let dx = -3; dx <= 3; dx++) {
      const ix = (<i32>load<u8>(p - s + 1) + 2 * <i32>load<u8>(p + 1) + <i32>load<u8>(p + s + 1))
        - (<i32>load<u8>(p - s - 1) + 2 * <i32>load<u8>(p - 1) + <i32>load<u8>(p + s - 1));
      const iy = (<i32>load<u8>(p + s - 1) + 2 * <i32>load<u8>(p + s) + <i32>load<u8>(p + s + 1))
        - (<i32>load<u8>(p - s - 1) + 2 * <i32>load<u8>(p - s) + <i32>load<u8>(p - s + 1));
      sxx += <i64>(ix * ix);
      syy += <i64>(iy * iy);
      sxy += <i64>(ix * iy);
      p++;
    }
  }
  const a = <f64>sxx;
  const b = <f64>syy;
  const c = <f64>sxy;
  return a * b - c * c - K * (a + b) * (a + b);
}
