// Cuts the sample stream into overlapping frames of FRAME_SIZE samples, one every HOP
// samples (chromaprint src/fft.cpp). Samples are int16 values held as f64.
import { FRAME_SIZE, HOP } from './config';

let buffer: usize = 0; // allocated once, on first use
let filled: i32 = 0;

export function resetFramer(): void {
  filled = 0;
}

/** The current frame (valid after `framerPush` returned true). */
export function framePtr(): usize {
  return buffer;
}

/** Appends up to `len` samples from `src`; returns how many were taken. The frame is full when `framerFull()`. */
export function framerPush(src: usize, len: i32): i32 {
  if (buffer == 0) buffer = heap.alloc(<usize>FRAME_SIZE << 3);
  let take = FRAME_SIZE - filled;
  if (take > len) take = len;
  const dst = buffer + (<usize>filled << 3);
  for (let i = 0; i < take; i++) {
    store<f64>(dst + (<usize>i << 3), <f64>load<i16>(src + (<usize>i << 1)));
  }
  filled += take;
  return take;
}

export function framerFull(): bool {
  return filled == FRAME_SIZE;
}

/** Drops the first HOP samples so the next frame starts HOP samples later. */
export function framerAdvance(): void {
  memory.copy(buffer, buffer + (<usize>HOP << 3), <usize>(FRAME_SIZE - HOP) << 3);
  filled = FRAME_SIZE - HOP;
}
