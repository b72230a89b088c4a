// The 16 classifiers of chromaprint's "test2" configuration
// (src/fingerprinter_configuration.cpp, src/classifier.h, src/filter.h, src/quantizer.h).
// Each applies a Haar-like filter to a window of the chroma image (x = frame offset,
// width along time, y/height along the 12 pitch classes), compares the two parts as
// log(1 + a) - log(1 + b), and quantizes the result into 4 levels with 3 thresholds.
import { CLASSIFIERS } from './config';
import { area } from './integral_image';
import { grayCode } from './gray_code';

// type, y, height, width per classifier
const FILTERS: StaticArray<i32> = [
  0, 4, 3, 15,
  4, 4, 6, 15,
  1, 0, 4, 16,
  3, 8, 2, 12,
  3, 4, 4, 8,
  4, 0, 3, 5,
  1, 2, 2, 9,
  2, 7, 3, 4,
  2, 6, 2, 16,
  2, 1, 3, 2,
  5, 10, 1, 15,
  3, 6, 2, 10,
  2, 1, 1, 14,
  3, 5, 6, 4,
  1, 9, 2, 12,
  3, 4, 2, 14,
];

// t0, t1, t2 per classifier
const THRESHOLDS: StaticArray<f64> = [
  1.98215, 2.35817, 2.63523,
  -1.03809, -0.651211, -0.282167,
  -0.298702, 0.119262, 0.558497,
  -0.105439, 0.0153946, 0.135898,
  -0.142891, 0.0258736, 0.200632,
  -0.826319, -0.590612, -0.368214,
  -0.557409, -0.233035, 0.0534525,
  -0.0646826, 0.00620476, 0.0784847,
  -0.192387, -0.029699, 0.215855,
  -0.0397818, -0.00568076, 0.0292026,
  -0.53823, -0.369934, -0.190235,
  -0.124877, 0.0296483, 0.139239,
  -0.101475, 0.0225617, 0.231971,
  -0.0799915, -0.00729616, 0.063262,
  -0.272556, 0.019424, 0.302559,
  -0.164292, -0.0321188, 0.0846339,
];

@inline function subtractLog(a: f64, b: f64): f64 {
  return Math.log(1.0 + a) - Math.log(1.0 + b);
}

/** The filter response of classifier k at frame offset x of the integral image. */
export function filterValue(k: i32, x: i32): f64 {
  const type = unchecked(FILTERS[k * 4]);
  const y = unchecked(FILTERS[k * 4 + 1]);
  const h = unchecked(FILTERS[k * 4 + 2]);
  const w = unchecked(FILTERS[k * 4 + 3]);
  switch (type) {
    case 0: // the whole rectangle
      return subtractLog(area(x, y, x + w, y + h), 0);
    case 1: { // upper half of the pitch range against the lower half
      const h2 = h / 2;
      return subtractLog(area(x, y + h2, x + w, y + h), area(x, y, x + w, y + h2));
    }
    case 2: { // later half in time against the earlier half
      const w2 = w / 2;
      return subtractLog(area(x + w2, y, x + w, y + h), area(x, y, x + w2, y + h));
    }
    case 3: { // the two diagonal quadrants against the other two
      const w2 = w / 2;
      const h2 = h / 2;
      const a = area(x, y + h2, x + w2, y + h) + area(x + w2, y, x + w, y + h2);
      const b = area(x, y, x + w2, y + h2) + area(x + w2, y + h2, x + w, y + h);
      return subtractLog(a, b);
    }
    case 4: { // middle third of the pitch range against the outer thirds
      const h3 = h / 3;
      const a = area(x, y + h3, x + w, y + 2 * h3);
      const b = area(x, y, x + w, y + h3) + area(x, y + 2 * h3, x + w, y + h);
      return subtractLog(a, b);
    }
    default: { // 5: middle third in time against the outer thirds
      const w3 = w / 3;
      const a = area(x + w3, y, x + 2 * w3, y + h);
      const b = area(x, y, x + w3, y + h) + area(x + 2 * w3, y, x + w, y + h);
      return subtractLog(a, b);
    }
  }
}

/** The 4-level quantization of `value` by classifier k's thresholds. */
export function quantize(k: i32, value: f64): i32 {
  const t0 = unchecked(THRESHOLDS[k * 3]);
  const t1 = unchecked(THRESHOLDS[k * 3 + 1]);
  const t2 = unchecked(THRESHOLDS[k * 3 + 2]);
  if (value < t1) return value < t0 ? 0 : 1;
  return value < t2 ? 2 : 3;
}

/** The 32-bit word of the frame window starting at x: classifier 0 in the top two bits. */
export function subFingerprint(x: i32): u32 {
  let bits: u32 = 0;
  for (let k = 0; k < CLASSIFIERS; k++) {
    bits = (bits << 2) | <u32>grayCode(quantize(k, filterValue(k, x)));
  }
  return bits;
}
