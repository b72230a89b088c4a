// 2-bit Gray code of a quantizer level: 0, 1, 3, 2 (chromaprint GrayCode), so that
// neighbouring levels differ in one bit.
export function grayCode(level: i32): i32 {
  return level ^ (level >> 1);
}
